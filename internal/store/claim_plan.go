package store

import (
	"strconv"
	"strings"
)

// batchMarker is where a claim query takes its batch size.
const batchMarker = "100 /* batch */"

// withBatch returns a claim statement with its batch size written in as a
// literal, so it can run as a cached prepared statement like every other
// query. After five runs Postgres may switch a prepared statement to a
// generic plan; with LIMIT as a parameter that plan expects a large batch
// and hashes the whole queue instead of walking the partial claim index
// (30 ms instead of 1 ms at 100k due rows). With the literal the generic
// plan is the index walk, planned once per connection instead of every
// claim (planning a claim of 100 cost as much as running it, ~1.3 ms).
// pgx caches one statement per batch size; a tick uses one. A claim for
// one workspace is planned per run (see ClaimEnrichment).
func withBatch(sql string, batch int) string {
	if !strings.Contains(sql, batchMarker) {
		panic("store: claim statement has no " + batchMarker)
	}
	return strings.ReplaceAll(sql, batchMarker, strconv.Itoa(batch))
}
