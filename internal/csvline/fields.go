// Package csvline reads the fields of one line of an imported CSV file
// (leads, suppressions) by the header's column names, with the rules both
// imports share: values trimmed, nothing Postgres cannot store, nothing
// over a length limit. It imports nothing of the project.
package csvline

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Fields is one CSV record, read by column name (Cols: name → index, from
// the header). A value with a NUL byte or invalid UTF-8, or longer than
// MaxLen characters, reads as "" and adds a reason to Reasons, so one
// message names every problem of the line.
type Fields struct {
	Rec     []string
	Cols    map[string]int
	MaxLen  int
	Reasons []string
}

// CountMismatch is why a record without one field per column is refused;
// "" when the counts match.
func (f *Fields) CountMismatch() string {
	if len(f.Rec) == len(f.Cols) {
		return ""
	}
	return fmt.Sprintf("has %d fields, the header has %d", len(f.Rec), len(f.Cols))
}

// Get is the trimmed value of column name; "" when the header has no such
// column or the value is refused.
func (f *Fields) Get(name string) string {
	i, ok := f.Cols[name]
	if !ok {
		return ""
	}
	v := strings.TrimSpace(f.Rec[i])
	switch {
	case strings.ContainsRune(v, 0):
		// Postgres text cannot hold NUL: the line is bad, not the import.
		f.Reasons = append(f.Reasons, name+" contains a NUL byte")
	case !utf8.ValidString(v):
		f.Reasons = append(f.Reasons, name+" is not valid UTF-8")
	case utf8.RuneCountInString(v) > f.MaxLen:
		f.Reasons = append(f.Reasons, fmt.Sprintf("%s is %d characters long (at most %d)", name, utf8.RuneCountInString(v), f.MaxLen))
	default:
		return v
	}
	return ""
}
