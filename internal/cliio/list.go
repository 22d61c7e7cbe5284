package cliio

import (
	"fmt"
	"strings"
	"text/tabwriter"
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
}

// WriteList prints l as one JSON document, or as a table with columns two
// spaces apart (the Empty line when there are no rows).
func WriteList[T any](s *IO, format Format, l List[T]) error {
	if format == FormatJSON {
		return s.WriteJSON(map[string]any{l.Key: l.Rows})
	}
	if len(l.Rows) == 0 {
		_, err := fmt.Fprintln(s.Out, l.Empty)
		return err
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(l.Header, "\t"))
	for _, r := range l.Rows {
		fmt.Fprintln(tw, strings.Join(l.Cells(r), "\t"))
	}
	return tw.Flush()
}
