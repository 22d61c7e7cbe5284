package cliio

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
)

// assertFits fails for every line of s wider than Width display columns.
func assertFits(t *testing.T, s string) {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if w := lipgloss.Width(l); w > Width {
			t.Errorf("line is %d columns, want at most %d:\n%s", w, Width, l)
		}
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing spaces: %q", l)
		}
	}
}

func TestTableCutsFreeTextFirstToFit(t *testing.T) {
	t.Parallel()
	reason := "quota_exhausted (HTTP 429): monthly credits used; upgrade the plan or wait for the renewal on the 1st"
	tab := Table{
		Headers:  []string{"workspace", "provider", "until", "reason", "failures"},
		Rows:     [][]string{{"acme-outbound", "millionverifier", "2026-06-05 06:05:00Z", reason, "1,234"}, {"beta", "hunter", "-", "", "0"}},
		Numeric:  []int{4},
		Whole:    []int{2},
		Flexible: []int{3},
	}
	out := NewPainter(&bytes.Buffer{}, false).Table(tab)
	assertFits(t, out)
	for _, whole := range []string{"acme-outbo", "2026-06-05 06:05:00Z", "1,234"} {
		if !strings.Contains(out, whole) {
			t.Errorf("%q was cut though another column could give way:\n%s", whole, out)
		}
	}
	if !strings.Contains(out, "quota_exhau") || !strings.Contains(out, "…") || strings.Contains(out, "renewal") {
		t.Errorf("reason not cut with an ellipsis:\n%s", out)
	}
	if tab.Rows[0][3] != reason {
		t.Error("Table changed the caller's rows")
	}

	// Without a free-text column the widest columns give way, never below
	// their header.
	tab.Flexible = nil
	tab.Rows[0][1] = strings.Repeat("p", 60)
	out = NewPainter(&bytes.Buffer{}, false).Table(tab)
	assertFits(t, out)
	if !strings.Contains(out, "failures") || !strings.Contains(out, "workspace") || !strings.Contains(out, "2026-06-05 06:05:00Z") {
		t.Errorf("a header or a whole column was cut:\n%s", out)
	}

	// A table that fits is left alone.
	small := Table{Headers: []string{"a", "b"}, Rows: [][]string{{"x", reason[:40]}}, Flexible: []int{1}}
	if out := NewPainter(&bytes.Buffer{}, false).Table(small); !strings.Contains(out, reason[:40]) || strings.Contains(out, "…") {
		t.Errorf("a fitting table was cut:\n%s", out)
	}
}

func TestTableCutsStyledCells(t *testing.T) {
	t.Parallel()
	p := NewPainter(&bytes.Buffer{}, true)
	tab := Table{Headers: []string{"state", "reason"}, Rows: [][]string{{p.Bad.Render("open"), p.Bad.Render(strings.Repeat("long reason ", 10))}}, Flexible: []int{1}}
	out := p.Table(tab)
	if !strings.Contains(out, "\x1b[") {
		t.Fatalf("no colour in a coloured table:\n%q", out)
	}
	assertFits(t, out)
}

func TestWrapLongLines(t *testing.T) {
	t.Parallel()
	line := "blocked (not overdue): no email 3, paused mailbox 6, outside window 17, no mailbox 0, paused campaign 0"
	got := Wrap("short\n" + line + "\n")
	assertFits(t, got)
	if want := "short\nblocked (not overdue): no email 3, paused mailbox 6, outside window 17, no\n  mailbox 0, paused campaign 0\n"; got != want {
		t.Errorf("got\n%q, want\n%q", got, want)
	}
}

// The cutting rule on its own: the widest column above its floor, from
// the first group that has one, until the widths fit.
func TestShrink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		widths, floors []int
		budget         int
		groups         [][]int
		want           []int
	}{
		{"fits already", []int{5, 5}, []int{1, 1}, 10, [][]int{{0, 1}}, []int{5, 5}},
		{"widest first", []int{10, 4}, []int{1, 1}, 10, [][]int{{0, 1}}, []int{6, 4}},
		{"evens out", []int{8, 8}, []int{1, 1}, 10, [][]int{{0, 1}}, []int{5, 5}},
		{"first group first", []int{10, 10}, []int{1, 1}, 16, [][]int{{1}, {0, 1}}, []int{10, 6}},
		{"next group once the first is at its floor", []int{10, 10}, []int{1, 8}, 14, [][]int{{1}, {0}}, []int{6, 8}},
		{"floors hold", []int{10, 10}, []int{9, 9}, 10, [][]int{{0, 1}}, []int{9, 9}},
		{"a column in no group is kept", []int{10, 10}, []int{1, 1}, 12, [][]int{{0}}, []int{2, 10}},
	} {
		w := slices.Clone(tc.widths)
		shrink(w, tc.floors, tc.budget, tc.groups...)
		if !slices.Equal(w, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, w, tc.want)
		}
	}
}
