package store

import "embed"

// Every query lives in its own file under queries/, named <area>_<what>.sql
// (email_, enrich_, guard_, leads_, ops_), so SQL is reviewed as SQL.
//
//go:embed queries/*.sql
var queryFiles embed.FS

// query returns the SQL of queries/<name>.sql. The files are embedded, so a
// missing one is a build mistake: TestEveryQueryPrepares loads every file,
// and the first test that runs a query by a wrong name fails.
func query(name string) string {
	b, err := queryFiles.ReadFile("queries/" + name + ".sql")
	if err != nil {
		panic("store: missing query " + name)
	}
	return string(b)
}
