package store

import "embed"

//go:embed queries/email_*.sql
var emailQueries embed.FS

// emailQuery returns the SQL of queries/email_<name>.sql. The files are
// embedded, so a missing one is a build mistake caught by the first test.
func emailQuery(name string) string {
	b, err := emailQueries.ReadFile("queries/email_" + name + ".sql")
	if err != nil {
		panic("store: missing query " + name)
	}
	return string(b)
}
