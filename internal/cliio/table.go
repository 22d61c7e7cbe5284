package cliio

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// Width is the display width every table and text line fits: a default
// terminal, and what survives a paste into an incident note.
const Width = 80

// Painter draws styled text and tables through one renderer, so colour is
// decided once by the caller instead of from the process's stdout.
type Painter struct {
	r                          *lipgloss.Renderer
	Head, Bad, Warn, Good, Dim lipgloss.Style
	header, cell               lipgloss.Style
}

// NewPainter draws for w, in colour only when color is set.
func NewPainter(w io.Writer, color bool) *Painter {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return &Painter{
		r:      r,
		Head:   r.NewStyle().Bold(true),
		Bad:    r.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		Warn:   r.NewStyle().Foreground(lipgloss.Color("11")),
		Good:   r.NewStyle().Foreground(lipgloss.Color("10")),
		Dim:    r.NewStyle().Faint(true),
		header: r.NewStyle().Bold(true).PaddingRight(2),
		cell:   r.NewStyle().PaddingRight(2),
	}
}

// Table is rows under headers, as every command draws them for people.
type Table struct {
	Headers []string
	Rows    [][]string
	// Numeric columns (by index) align right and are never cut: a cut
	// number reads as a different number.
	Numeric []int
	// Whole columns (by index, e.g. timestamps) are cut only when nothing
	// else is left to cut.
	Whole []int
	// Flexible columns (by index) hold free text (reasons, errors): they
	// are cut first, with an ellipsis, when the table is wider than Width.
	Flexible []int
}

// flexibleFloor is the narrowest a free-text column is cut to before the
// other columns are cut too: enough to tell one reason from another.
const flexibleFloor = 12

// Table draws t as columns two spaces apart under a bold header and a
// rule (no boxes: they cost three columns per column), cutting cells with an ellipsis so that the table
// fits Width: free-text columns first, then the widest others, then Whole
// columns, never below their header and never a Numeric one. JSON output
// carries the cells uncut.
func (p *Painter) Table(t Table) string {
	rows := fitCells(t)
	right := map[int]bool{}
	for _, c := range t.Numeric {
		right[c] = true
	}
	last := len(t.Headers) - 1
	out := table.New().
		Border(lipgloss.NormalBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).BorderColumn(false).
		BorderStyle(p.r.NewStyle()).
		Headers(t.Headers...).
		Rows(rows...).
		StyleFunc(func(row, col int) lipgloss.Style {
			s := p.cell
			if row == table.HeaderRow {
				s = p.header
			}
			if col == last {
				s = s.PaddingRight(0)
			}
			if right[col] {
				s = s.Align(lipgloss.Right)
			}
			return s
		}).
		Render()
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ") // padding of the last cells
	}
	return strings.Join(lines, "\n")
}

// fitCells returns t's rows with cells cut to column widths whose table
// (two spaces between columns) fits Width.
func fitCells(t Table) [][]string {
	n := len(t.Headers)
	widths, floors, others, all := columnWidths(t)
	shrink(widths, floors, Width-2*(n-1), t.Flexible, others, all)
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = make([]string, len(r))
		for c, cell := range r {
			if c < n && lipgloss.Width(cell) > widths[c] {
				cell = ansi.Truncate(cell, widths[c], "…")
			}
			rows[i][c] = cell
		}
	}
	return rows
}

// columnWidths are t's natural column widths and the floors no cut goes
// below (a header; a flexible column's flexibleFloor; a numeric column
// whole), with the columns that are neither free text nor kept whole
// (others) and every column (all).
func columnWidths(t Table) (widths, floors, others, all []int) {
	n := len(t.Headers)
	widths, floors = make([]int, n), make([]int, n)
	for c, h := range t.Headers {
		all = append(all, c)
		widths[c] = lipgloss.Width(h)
		floors[c] = widths[c]
		switch {
		case slices.Contains(t.Flexible, c):
			floors[c] = max(floors[c], flexibleFloor)
		case !slices.Contains(t.Whole, c) && !slices.Contains(t.Numeric, c):
			others = append(others, c)
		}
	}
	for _, r := range t.Rows {
		for c := 0; c < n && c < len(r); c++ {
			widths[c] = max(widths[c], lipgloss.Width(r[c]))
		}
	}
	for _, c := range t.Numeric {
		if c < n {
			floors[c] = widths[c]
		}
	}
	return widths, floors, others, all
}

// shrink narrows widths one character at a time until they sum to at
// most budget: always the widest column still above its floor, from the
// first of groups that has one. It stops when none has room left.
func shrink(widths, floors []int, budget int, groups ...[]int) {
	total := 0
	for _, w := range widths {
		total += w
	}
	for ; total > budget; total-- {
		c := -1
		for _, g := range groups {
			if c = widestAbove(widths, floors, g); c >= 0 {
				break
			}
		}
		if c < 0 {
			return // more columns than the budget holds: nothing left to cut
		}
		widths[c]--
	}
}

// widestAbove is the widest of cols still wider than its floor, or -1.
func widestAbove(widths, floors, cols []int) int {
	best := -1
	for _, c := range cols {
		if c >= len(widths) {
			continue
		}
		if widths[c] > floors[c] && (best < 0 || widths[c] > widths[best]) {
			best = c
		}
	}
	return best
}

// Wrap word-wraps every line of s wider than Width, indenting the
// continuation lines by two spaces so they read as one item.
func Wrap(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if lipgloss.Width(l) <= Width {
			continue
		}
		lines[i] = strings.ReplaceAll(ansi.Wrap(l, Width-2, ""), "\n", "\n  ")
	}
	return strings.Join(lines, "\n")
}

// Thousands formats 86000 as 86,000: every count in text output.
func Thousands[N ~int | ~int32 | ~int64](n N) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Decimal formats v with places decimals and the integer part grouped like
// Thousands: 12345.6 as 12,345.60.
func Decimal(v float64, places int) string {
	s := strconv.FormatFloat(v, 'f', places, 64)
	whole, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil { // beyond int64: leave it ungrouped
		return s
	}
	grouped := Thousands(n)
	if n == 0 && strings.HasPrefix(whole, "-") { // -0.5 keeps its sign
		grouped = "-0"
	}
	if frac == "" {
		return grouped
	}
	return grouped + "." + frac
}
