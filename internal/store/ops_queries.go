package store

import "embed"

//go:embed queries/ops_*.sql
var opsQueries embed.FS

// opsQuery returns the SQL of queries/ops_<name>.sql: the read and repair
// queries of the operator commands (status, why, requeue).
func opsQuery(name string) string {
	b, err := opsQueries.ReadFile("queries/ops_" + name + ".sql")
	if err != nil {
		panic("store: missing query " + name)
	}
	return string(b)
}
