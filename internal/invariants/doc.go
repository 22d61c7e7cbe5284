// Package invariants is the sending-limits invariant harness (issue 23):
// seeded random schedules of real rindactl processes (email, inbox and
// enrich ticks, requeue, import leads, enroll, enrollment mark) running at
// once against a Postgres of its own, killed with SIGKILL at random
// moments, with Postgres restarted under them, fake SMTP, IMAP and provider
// servers switching fault modes, and time moved forward. After each run it
// checks, from the database and from the fake servers' own logs (never from
// the ticks' reports), the promises that keep customers' mailboxes alive:
// caps, windows, at-most-once steps, stops, recorded claims, spend.
//
// It has no code of its own outside its tests:
//
//	make invariants SEED=1 RUNS=200   # or go test ./internal/invariants -run TestInvariants
//
// prints each run's seed; SEED=<seed> RUNS=1 replays one schedule. See
// docs/reliability.md, "Invariant harness".
package invariants
