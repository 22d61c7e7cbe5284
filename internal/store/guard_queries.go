package store

import "embed"

//go:embed queries/guard_*.sql
var guardQueries embed.FS

// guardQuery returns the SQL of queries/guard_<name>.sql. The files are
// embedded, so a missing one is a build mistake caught by the first test.
func guardQuery(name string) string {
	b, err := guardQueries.ReadFile("queries/guard_" + name + ".sql")
	if err != nil {
		panic("store: missing query " + name)
	}
	return string(b)
}
