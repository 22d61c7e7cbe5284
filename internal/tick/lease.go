package tick

import (
	"fmt"
	"time"
)

// LeaseMargin is what a lease sized from --max-duration adds beyond the
// longest a tick can hold its rows: room to record the outcomes.
const LeaseMargin = time.Minute

// Grace is how long a tick kind may still hold a row after its
// --max-duration: work begun before the deadline (a provider call, an SMTP
// message, an IMAP chunk) that may run on until it is cut.
type Grace struct {
	Duration time.Duration
	// What names it in an error, e.g. "the 1s SMTP grace".
	What string
}

// LeaseError is an explicit --lease that does not outlast --max-duration
// plus the kind's grace.
type LeaseError struct {
	Lease, MaxDuration time.Duration
	Grace              Grace
}

func (e *LeaseError) Error() string {
	return fmt.Sprintf("--lease %s must exceed --max-duration %s plus %s: use --lease %s or more, or leave --lease unset; a shorter lease lets another tick take rows this one still works",
		e.Lease, e.MaxDuration, e.Grace.What, e.MaxDuration+e.Grace.Duration+time.Second)
}

// FitLease is the lease rule of every tick kind. A tick may hold what it
// claimed until maxDuration plus grace, so its lease must end later:
// otherwise another tick takes a row whose call is still running. An
// explicit lease (given on the command line) that does not is refused
// with a *LeaseError; a default one that does not grows to that plus
// LeaseMargin, so any schedule's --max-duration (an hourly one's 3590s)
// runs without a --lease of its own.
func FitLease(lease time.Duration, explicit bool, maxDuration time.Duration, grace Grace) (time.Duration, error) {
	held := maxDuration + grace.Duration
	if lease > held {
		return lease, nil
	}
	if explicit {
		return 0, &LeaseError{Lease: lease, MaxDuration: maxDuration, Grace: grace}
	}
	return held + LeaseMargin, nil
}
