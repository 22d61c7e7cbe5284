package requeue_test

import "strings"

// splitSQL splits a seed script on statement ends (no semicolons in strings).
func splitSQL(s string) []string {
	var out []string
	for _, stmt := range strings.Split(s, ";") {
		if strings.TrimSpace(stmt) != "" {
			out = append(out, stmt)
		}
	}
	return out
}

func containsParam(stmt string) bool { return strings.Contains(stmt, "$1") }
