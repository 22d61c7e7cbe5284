package store

import (
	"embed"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// Every query lives in its own file under queries/, named <area>_<what>.sql
// (email_, enrich_, guard_, leads_, ops_), so SQL is reviewed as SQL.
//
//go:embed queries/*.sql
var queryFiles embed.FS

// queryTexts reads every query file once: a tick runs some statements
// thousands of times, and reading the file copies it each time.
var queryTexts = sync.OnceValue(func() map[string]string {
	texts := map[string]string{}
	names, _ := fs.Glob(queryFiles, "queries/*.sql")
	for _, p := range names {
		b, err := queryFiles.ReadFile(p)
		if err != nil {
			panic("store: reading embedded " + p + ": " + err.Error())
		}
		texts[strings.TrimSuffix(path.Base(p), ".sql")] = string(b)
	}
	return texts
})

// query returns the SQL of queries/<name>.sql. The files are embedded, so a
// missing one is a build mistake: TestEveryQueryPrepares loads every file,
// and the first test that runs a query by a wrong name fails.
func query(name string) string {
	sql, ok := queryTexts()[name]
	if !ok {
		panic("store: missing query " + name)
	}
	return sql
}
