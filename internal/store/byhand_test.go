package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every statement is typed. A hand-run one (queries/byhand/<name>.sql) is
// embedded into its own variable <name>SQL, its parameters are the fields of
// <name>Params (or <Name>Params) in order (one field per $n), and exactly one function runs
// it; nothing looks a statement up by name (no embed.FS in the store). The
// generated ones name every parameter (sqlc.arg), so no generated struct
// has Column1..N fields.
func TestByHandStatementsTyped(t *testing.T) {
	t.Parallel()
	files := storeSources(t)

	embeds := map[string]string{} // byhand file name -> variable
	structs := map[string]*ast.StructType{}
	for path, f := range files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gen.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if st, ok := s.Type.(*ast.StructType); ok {
						structs[s.Name.Name] = st
					}
				case *ast.ValueSpec:
					if sel, ok := s.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "FS" {
						t.Errorf("%s: %s is an embed.FS: embed each hand-run statement into a string variable of its own", path, s.Names[0])
					}
					doc := s.Doc
					if doc == nil && len(gen.Specs) == 1 {
						doc = gen.Doc
					}
					for _, c := range commentLines(doc) {
						pattern, ok := strings.CutPrefix(c, "//go:embed ")
						if !ok {
							continue
						}
						name, ok := strings.CutPrefix(pattern, "queries/byhand/")
						if !ok || strings.ContainsAny(name, "*?[ ") || !strings.HasSuffix(name, ".sql") || len(s.Names) != 1 {
							t.Errorf("%s: //go:embed %s: embed one queries/byhand file into one variable", path, pattern)
							continue
						}
						name = strings.TrimSuffix(name, ".sql")
						if want := camel(name) + "SQL"; s.Names[0].Name != want {
							t.Errorf("%s: queries/byhand/%s.sql is embedded into %s, want %s", path, name, s.Names[0].Name, want)
						}
						if prev, dup := embeds[name]; dup {
							t.Errorf("queries/byhand/%s.sql is embedded twice (%s, %s)", name, prev, s.Names[0].Name)
						}
						embeds[name] = s.Names[0].Name
					}
				}
			}
		}
	}

	onDisk, err := filepath.Glob(filepath.Join("queries", "byhand", "*.sql"))
	if err != nil || len(onDisk) == 0 {
		t.Fatalf("no hand-run queries: %v", err)
	}
	for _, p := range onDisk {
		name := strings.TrimSuffix(filepath.Base(p), ".sql")
		v, ok := embeds[name]
		if !ok {
			t.Errorf("%s is not embedded: give it a variable %sSQL and one function that runs it", p, camel(name))
			continue
		}
		sql, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n := parameterCount(string(sql))
		// <name>Params, or <Name>Params where callers outside the store
		// fill it in.
		paramsType := camel(name) + "Params"
		st, hasParams := structs[paramsType]
		if exported := strings.ToUpper(paramsType[:1]) + paramsType[1:]; !hasParams {
			if st, hasParams = structs[exported]; hasParams {
				paramsType = exported
			}
		}
		switch {
		case n == 0 && hasParams:
			t.Errorf("%s takes no parameters, but %s exists", p, paramsType)
		case n > 0 && !hasParams:
			t.Errorf("%s takes %d parameters: declare them as the fields of %s, $1 first", p, n, paramsType)
		case n > 0 && fieldCount(st) != n:
			t.Errorf("%s takes %d parameters, %s has %d fields", p, n, paramsType, fieldCount(st))
		}
		callers := referrers(files, v)
		if len(callers) != 1 {
			t.Errorf("%s (%s) is run by %d functions %v, want exactly one typed caller", p, v, len(callers), callers)
			continue
		}
		if hasParams && !slices.Contains(referrers(files, paramsType), callers[0]) {
			t.Errorf("%s runs %s without its %s", callers[0], v, paramsType)
		}
	}
}

func TestGeneratedParametersNamed(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("sqlcdb", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated code in sqlcdb: %v", err)
	}
	// Column1, dollar_1: a $n sqlc could not name; Count_2: a second
	// unnamed column of the same kind.
	unnamed := regexp.MustCompile(`^(Column\d+|dollar_\d+|[A-Z]\w*_\d+)$`)
	fset := token.NewFileSet()
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && unnamed.MatchString(id.Name) {
				t.Errorf("%s: %s: name the parameter in the query with sqlc.arg(name) or sqlc.narg(name), or alias the column", fset.Position(id.Pos()), id.Name)
				return false
			}
			return true
		})
	}
}

// storeSources parses the store's non-test Go files.
func storeSources(t *testing.T) map[string]*ast.File {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = f
	}
	return out
}

func commentLines(g *ast.CommentGroup) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, c := range g.List {
		out = append(out, c.Text)
	}
	return out
}

// referrers names the functions (and methods) that use ident, in their
// signature or body.
func referrers(files map[string]*ast.File, ident string) []string {
	var out []string
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			found := false
			ast.Inspect(fn, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == ident {
					found = true
				}
				return !found
			})
			if found {
				out = append(out, fn.Name.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

func fieldCount(st *ast.StructType) int {
	n := 0
	for _, f := range st.Fields.List {
		n += max(len(f.Names), 1)
	}
	return n
}

// parameterCount is the highest $n in sql, outside -- comments.
func parameterCount(sql string) int {
	n := 0
	for _, line := range strings.Split(sql, "\n") {
		line, _, _ = strings.Cut(line, "--")
		for _, m := range regexp.MustCompile(`\$(\d+)`).FindAllStringSubmatch(line, -1) {
			var k int
			for _, c := range m[1] {
				k = k*10 + int(c-'0')
			}
			n = max(n, k)
		}
	}
	return n
}

// camel turns a file name (email_sends_begin) into a Go name
// (emailSendsBegin).
func camel(name string) string {
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// Plans are pinned one way, by a plan rule (plan.go): nothing else in the
// store picks an exec mode or sets a planner setting.
func TestPlansPinnedOneWay(t *testing.T) {
	t.Parallel()
	for path, f := range storeSources(t) {
		if path == "plan.go" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if strings.HasPrefix(n.Sel.Name, "QueryExecMode") {
					t.Errorf("%s: %s: pin a plan with a plan rule (plan.go), not an exec mode", path, n.Sel.Name)
				}
			case *ast.BasicLit:
				for _, setting := range []string{"enable_seqscan", "plan_cache_mode", "enable_hashjoin", "enable_nestloop"} {
					if strings.Contains(n.Value, setting) {
						t.Errorf("%s: sets %s: pin a plan with a plan rule (plan.go)", path, setting)
					}
				}
			}
			return true
		})
	}
}
