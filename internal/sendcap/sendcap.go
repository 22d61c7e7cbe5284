// Package sendcap is how much a mailbox may send in a day: its daily cap,
// and the warm-up ramp that holds a new mailbox below it. The campaign
// file, the store, the email claim's bookkeeping and status all read a
// mailbox's limits through Cap, so daily_cap has one meaning in Go.
package sendcap

import "time"

// Cap is a mailbox's sending limit.
type Cap struct {
	// Daily is the most messages the mailbox sends in a rolling day; 0: no cap.
	Daily int
	// Ramp, when set, holds the cap lower while the mailbox warms up.
	Ramp *Ramp
}

// Ramp is a new mailbox's warm-up: its cap starts at Start and grows by
// Step every Every up to Max. Growth waits a period after a bounce or a
// pause (the store decides, see email_ramp_grow.sql).
type Ramp struct {
	Start int
	Step  int
	Every time.Duration
	Max   int
}

// At is the cap in force with the ramp at level (levels it has grown):
// the ramp's Start + Step × level up to its Max, and never above Daily.
// fromRamp reports that the ramp, not Daily, sets it; 0 is no cap.
func (c Cap) At(level int) (limit int, fromRamp bool) {
	if c.Ramp == nil {
		return c.Daily, false
	}
	limit = min(c.Ramp.Start+c.Ramp.Step*level, c.Ramp.Max)
	if c.Daily > 0 && c.Daily <= limit {
		return c.Daily, false
	}
	return limit, true
}
