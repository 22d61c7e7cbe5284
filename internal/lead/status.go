// Package lead holds the words of a lead's enrichment life: its statuses
// (lead_enrichment.status) and the moves between them. It imports nothing
// of the project, so the store and every domain package share one type.
package lead

import "slices"

// Status is a lead's enrichment state, as stored in lead_enrichment.status.
type Status string

const (
	Pending          Status = "pending"
	InProgress       Status = "in_progress"
	Enriched         Status = "enriched"
	NotFound         Status = "not_found"
	Unreachable      Status = "unreachable"
	EnrichmentFailed Status = "enrichment_failed"
)

// Statuses lists every status in the order reports show them; the
// database's CHECK constraint allows exactly these (schema test).
var Statuses = []Status{Pending, InProgress, Enriched, NotFound, Unreachable, EnrichmentFailed}

// Requeueable are the statuses a tick gave up on that only an operator
// moves back to pending (requeue).
var Requeueable = []Status{Unreachable, EnrichmentFailed}

// transitions is every move a lead's status may make. The claim takes
// pending leads, unreachable ones out of their negative cache and
// in_progress ones whose lease ran out (a crashed tick); enrich.decide()
// picks the claimed lead's next state (a release goes back to pending, a
// lead that got an address while queued to enriched); requeue revives the
// parked ones; an import that brings an address enriches any lead not in
// progress. Keep it in step with enrich.decide(): a test runs decide
// against it, docs/enrichment.md draws it.
var transitions = map[Status][]Status{
	Pending:          {InProgress, Enriched},
	InProgress:       {InProgress, Pending, Enriched, NotFound, Unreachable, EnrichmentFailed},
	Unreachable:      {InProgress, Pending, Enriched},
	NotFound:         {Enriched},
	EnrichmentFailed: {Pending, Enriched},
}

// CanBecome reports whether a lead in status s may move to next.
func (s Status) CanBecome(next Status) bool { return slices.Contains(transitions[s], next) }

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }
