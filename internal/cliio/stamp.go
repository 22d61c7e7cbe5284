package cliio

import "time"

// StampLayout is the one format of a time in human output (tables, text
// lines): UTC, to the second, readable. JSON carries RFC 3339.
const StampLayout = "2006-01-02 15:04:05Z"

// Stamp writes t in StampLayout.
func Stamp(t time.Time) string { return t.UTC().Format(StampLayout) }
