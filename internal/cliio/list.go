package cliio

import (
	"fmt"
	"io"
	"strings"
)

// List is what a list command (breaker list, events list, workspace list)
// found and how to show it.
type List[T any] struct {
	// Key names the rows in the JSON document: {"<Key>": [...]}.
	Key  string
	Rows []T
	// Empty is the text line printed when there are no rows.
	Empty  string
	Header []string
	// Cells renders one row as the table's columns.
	Cells func(T) []string
	// Numeric, Whole and Flexible columns as in Table.
	Numeric, Whole, Flexible []int
	// Note, when set, gives a row's free text (a reason) printed whole
	// under the table, wrapped to Width; "" prints nothing.
	Note func(T) string
}

// WriteList prints l as one JSON document (cells uncut), or as a table in
// the style of every table (the Empty line when there are no rows).
func WriteList[T any](s *IO, format Format, l List[T]) error {
	if format == FormatJSON {
		return s.WriteJSON(map[string]any{l.Key: l.Rows})
	}
	if len(l.Rows) == 0 {
		_, err := fmt.Fprintln(s.Out, l.Empty)
		return err
	}
	t := Table{Headers: l.Header, Numeric: l.Numeric, Whole: l.Whole, Flexible: l.Flexible}
	var notes strings.Builder
	for _, r := range l.Rows {
		t.Rows = append(t.Rows, l.Cells(r))
		if l.Note == nil {
			continue
		}
		if n := l.Note(r); n != "" {
			notes.WriteString(n + "\n")
		}
	}
	_, err := io.WriteString(s.Out, NewPainter(s.Out, s.ColorEnabled()).Table(t)+"\n"+Wrap(notes.String()))
	return err
}
