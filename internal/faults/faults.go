// Package faults holds the fault switches of the invariant harness's broken
// builds (make invariants-broken, internal/invariants): each switch undoes
// the guard that keeps one invariant, at the point where the code enforces
// it (`if faults.On(faults.Cap) ...`). They exist only in a build with the
// rindafaults tag, which reads RINDA_FAULTS; in every other build On is a
// constant false the compiler removes with the branch it guards, so the
// shipped binary pays nothing and has no switch to turn on.
//
// A switch is Go, not a text patch of the code it breaks: a refactoring
// that moves the guard moves or drops the call, and the harness's wiring
// test (internal/invariants, TestEveryFaultIsWired) fails when a switch is
// no longer called anywhere.
package faults

// Fault names one switch; its value is what RINDA_FAULTS lists.
type Fault string

// The switches, one per invariant of the harness (its check of that name).
const (
	// Cap: the email claim takes every due row of a mailbox with room
	// left, whatever its daily cap (store.ClaimEnrollments).
	Cap Fault = "cap"
	// Window: a lead's shut sending window never holds a claimed row back
	// (sequence windowOutcome).
	Window Fault = "window"
	// Once: a connection lost after the message's final dot is a
	// transient failure, retried, instead of delivery_unknown
	// (sequence noReplyKind).
	Once Fault = "once"
	// Stops: the claim takes the follow-ups of replied and unsubscribed
	// enrollments (email_claim.sql, $7).
	Stops Fault = "stops"
	// Recorded: the settle never moves a send off 'sending' (store.Settle).
	Recorded Fault = "recorded"
	// Spend: the guard admits and bills calls whatever the workspace's
	// monthly ceiling (guard_admit.sql, $12).
	Spend Fault = "spend"
	// BoughtTwice: a lead's waterfall forgets what an earlier attempt
	// bought (an address kept unrecorded) or may have bought (a finder in
	// doubt), and asks those finders again (enrich waterfall).
	BoughtTwice Fault = "paid_find_twice"
	// ParkedWhileServable: a finder that is out or blocked (its quota
	// answer, or a guard's refusal) ends the lead's waterfall and parks
	// the lead unreachable, the finders after it unasked (enrich
	// waterfall).
	ParkedWhileServable Fault = "parked_while_servable"
)

// All are the switches, in the order the harness tries them.
var All = []Fault{Cap, Window, Once, Stops, Recorded, Spend, BoughtTwice, ParkedWhileServable}

// Env lists the switches a rindafaults build turns on, comma-separated.
const Env = "RINDA_FAULTS"

// ReachedEnv names a file a rindafaults build appends a switch's name to
// the first time each process reaches it switched on: the harness's proof
// that the broken build ran the broken code.
const ReachedEnv = "RINDA_FAULTS_REACHED"
