package store

// Exported for the external tests of this package only.
var (
	QueryFiles = queryFiles
	Query      = query
)

var ClaimSQL = claimSQL
