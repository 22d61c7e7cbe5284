package csvline

import (
	"slices"
	"strings"
	"testing"
)

func TestFields(t *testing.T) {
	t.Parallel()
	cols := map[string]int{"a": 0, "b": 1, "c": 2}
	for _, tc := range []struct {
		name    string
		rec     []string
		want    []string // a, b, c, and a missing column
		reasons []string
	}{
		{"trimmed", []string{" x ", "y", ""}, []string{"x", "y", "", ""}, nil},
		{"NUL", []string{"x\x00", "y", "z"}, []string{"", "y", "z", ""}, []string{"a contains a NUL byte"}},
		{"invalid UTF-8", []string{"x", "\xff", "z"}, []string{"x", "", "z", ""}, []string{"b is not valid UTF-8"}},
		{"too long", []string{"x", "y", strings.Repeat("é", 6)}, []string{"x", "y", "", ""}, []string{"c is 6 characters long (at most 5)"}},
		{"at the limit", []string{"x", "y", strings.Repeat("é", 5)}, []string{"x", "y", strings.Repeat("é", 5), ""}, nil},
		{"every problem", []string{"\x00", "\xff", "123456"}, []string{"", "", "", ""}, []string{"a contains a NUL byte", "b is not valid UTF-8", "c is 6 characters long (at most 5)"}},
	} {
		f := &Fields{Rec: tc.rec, Cols: cols, MaxLen: 5}
		if m := f.CountMismatch(); m != "" {
			t.Fatalf("%s: %s", tc.name, m)
		}
		got := []string{f.Get("a"), f.Get("b"), f.Get("c"), f.Get("d")}
		if !slices.Equal(got, tc.want) || !slices.Equal(f.Reasons, tc.reasons) {
			t.Errorf("%s: %q reasons %q, want %q reasons %q", tc.name, got, f.Reasons, tc.want, tc.reasons)
		}
	}
	if m := (&Fields{Rec: []string{"x"}, Cols: cols}).CountMismatch(); m != "has 1 fields, the header has 3" {
		t.Errorf("count mismatch %q", m)
	}
}
