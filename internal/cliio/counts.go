package cliio

import (
	"maps"
	"slices"
	"strings"
)

// Counts prints a count per name in name order, each as name+sep+count,
// joined by join ("sent=3 transient=1", "enriched 12, unreachable 4"), or
// "none" when there is nothing to count.
func Counts(m map[string]int, sep, join string) string {
	if len(m) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + sep + Thousands(m[k])
	}
	return strings.Join(parts, join)
}
