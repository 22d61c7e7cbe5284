package store

// Exported for the external tests of this package only: the hand-run
// statements tests EXPLAIN.
var (
	EmailClaimSQL      = emailClaimSQL
	EmailSettleSQL     = emailSettleSQL
	EmailSendsBeginSQL = emailSendsBeginSQL
)

// EnrichClaimSQL is the enrichment claim with batch written in.
func EnrichClaimSQL(batch int) string { return withBatch(enrichClaimSQL, batch) }

// WithBatch writes batch into a claim statement.
var WithBatch = withBatch
