package sequence

import (
	"testing"
	"time"
)

// claimReady, the claim loop's decision when to claim again, as a table:
// no goroutines, no clock.
func TestClaimReady(t *testing.T) {
	t.Parallel()
	idle := flight{oldest: 3}
	onlyCurrent := flight{any: true, current: true, oldest: 3}
	olderRunning := flight{any: true, older: true, current: true, oldest: 2}
	olderOnly := flight{any: true, older: true, oldest: 2}
	olderQueued := flight{any: true, older: true, current: true, oldest: 2, queued: true}
	cases := []struct {
		name         string
		f            flight
		full         bool
		ended, dried bool
		straggleIn   time.Duration
		ready, watch bool
	}{
		{name: "nothing running, full claim", f: idle, full: true, ready: true},
		{name: "nothing running, short claim", f: idle, ready: true},
		{name: "full: the previous batch is done", f: onlyCurrent, full: true, ready: true},
		{name: "full: the previous batch still out, no mailbox dry", f: olderRunning, full: true, ended: true, straggleIn: -time.Second},
		{name: "full: a mailbox ran dry, stragglers not yet late", f: olderRunning, full: true, dried: true, straggleIn: time.Second, watch: true},
		{name: "full: a mailbox ran dry, stragglers late", f: olderRunning, full: true, dried: true, straggleIn: 0, ready: true, watch: true},
		// Issue 30: jobs waiting for a slot are held by --concurrency, not by
		// a slow server; a claim now would only lease rows to wait behind them.
		{name: "full: a mailbox ran dry, stragglers late, jobs wait for a slot", f: olderQueued, full: true, dried: true, straggleIn: -time.Second},
		{name: "full: the previous batch is done, jobs wait for a slot", f: flight{any: true, current: true, oldest: 3, queued: true}, full: true},
		{name: "short: batch seq still sending", f: onlyCurrent, ended: true},
		{name: "short: batch seq done, nothing ended since the claim", f: olderOnly},
		{name: "short: batch seq done and a job ended since", f: olderOnly, ended: true, ready: true},
		{name: "short: stragglers do not count", f: olderOnly, dried: true, straggleIn: -time.Hour},
	}
	for _, tc := range cases {
		ready, watch := claimReady(tc.f, tc.full, tc.ended, tc.dried, tc.straggleIn)
		if ready != tc.ready || watch != tc.watch {
			t.Errorf("%s: claimReady = ready %v, watch %v; want %v, %v", tc.name, ready, watch, tc.ready, tc.watch)
		}
	}
}

func TestLaneBookFlight(t *testing.T) {
	t.Parallel()
	b := newLaneBook()
	if f := b.flight(1); f != (flight{oldest: 1}) {
		t.Errorf("empty book: %+v", f)
	}
	_, done1 := b.start(10, 1)
	b.start(11, 2)
	b.start(10, 2)
	if f := b.flight(2); f != (flight{any: true, older: true, current: true, oldest: 1}) {
		t.Errorf("batches 1 and 2 out: %+v", f)
	}
	done1()
	if f := b.flight(3); f != (flight{any: true, older: true, oldest: 2}) {
		t.Errorf("batch 2 out, newest 3: %+v", f)
	}
}
