package sendcap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCapAt(t *testing.T) {
	t.Parallel()
	ramp := &Ramp{Start: 20, Step: 10, Every: 24 * time.Hour, Max: 200}
	for _, tc := range []struct {
		name     string
		cap      Cap
		level    int
		want     int
		fromRamp bool
	}{
		{"no cap", Cap{}, 3, 0, false},
		{"daily cap only", Cap{Daily: 50}, 3, 50, false},
		{"ramp's first day", Cap{Ramp: ramp}, 0, 20, true},
		{"ramp grown", Cap{Ramp: ramp}, 3, 50, true},
		{"ramp at its max", Cap{Ramp: ramp}, 40, 200, true},
		{"daily cap under the ramp", Cap{Daily: 35, Ramp: ramp}, 3, 35, false},
		{"daily cap over the ramp", Cap{Daily: 500, Ramp: ramp}, 3, 50, true},
	} {
		if got, fromRamp := tc.cap.At(tc.level); got != tc.want || fromRamp != tc.fromRamp {
			t.Errorf("%s: At(%d) = %d, %v; want %d, %v", tc.name, tc.level, got, fromRamp, tc.want, tc.fromRamp)
		}
	}
}

// daily_cap lives in Cap: outside this package a struct field holding a
// daily cap (or a ramp's settings) is the campaign file's (a yaml tag) or a
// report's view (a json tag); everything else carries a Cap. Generated
// query code is left out.
func TestDailyCapLivesInCap(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	held := fieldNamed("DailyCap", "RampStart", "RampStep", "RampMax", "RampEvery")
	var seen int
	for _, dir := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "sqlcdb" || n == "benchdb" || n == "sendcap" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				st, ok := n.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fld := range st.Fields.List {
					for _, name := range fld.Names {
						if !held(name.Name) {
							continue
						}
						seen++
						tag := ""
						if fld.Tag != nil {
							tag = fld.Tag.Value
						}
						if tv := reflect.StructTag(strings.Trim(tag, "`")); tv.Get("yaml") == "" && tv.Get("json") == "" {
							t.Errorf("%s: field %s holds a mailbox's cap outside sendcap.Cap; carry a sendcap.Cap instead", path, name.Name)
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen == 0 {
		t.Fatal("no daily_cap field found at all: the walk is not reading the module")
	}
}

func fieldNamed(names ...string) func(string) bool {
	return func(s string) bool {
		for _, n := range names {
			if strings.Contains(s, n) {
				return true
			}
		}
		return false
	}
}
