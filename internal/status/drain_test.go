package status

import (
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sendcap"
	"github.com/rindactl/rindactl/internal/store"
)

// The drain of one mailbox, simulated from its cap in force, its taken
// slots and its backlog.
func TestMailboxDrain(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 5, 5, 55, 0, 0, time.UTC)
	day := 24 * time.Hour
	tomorrow := now.Add(day)
	cases := []struct {
		name     string
		m        Mailbox
		took     time.Duration
		sendable int64
		limit    string
	}{
		{
			// The finding: daily_cap 0, a ramp at 3 a day, 17 overdue
			// printed "drain: about -". 3 a day: 3+3+3+3+3, then 2 on day 6.
			name: "ramp only, flat", took: 5 * day, sendable: 3, limit: "ramp",
			m: Mailbox{CapToday: 3, backlog: []drainSlot{{now, 17}},
				ramp: rampPlan{cap: sendcap.Cap{Ramp: &sendcap.Ramp{Start: 3, Max: 3, Every: day}}, dueAt: &tomorrow}},
		},
		{
			// Growing by one a day: 3, 4, 5, then 5 of 6.
			name: "ramp only, growing", took: 3 * day, sendable: 3, limit: "ramp",
			m: Mailbox{CapToday: 3, backlog: []drainSlot{{now, 17}},
				ramp: rampPlan{cap: sendcap.Cap{Ramp: &sendcap.Ramp{Start: 3, Step: 1, Max: 10, Every: day}}, dueAt: &tomorrow}},
		},
		{
			// Rows backing off 5 minutes printed "about 1s": they go in 5 minutes.
			name: "backing off, uncapped", took: 5 * time.Minute, sendable: 0, limit: "backoff",
			m: Mailbox{backlog: []drainSlot{{now.Add(5 * time.Minute), 10}}},
		},
		{
			name: "backing off, under the cap", took: 5 * time.Minute, sendable: 2, limit: "backoff",
			m: Mailbox{CapToday: 50, backlog: []drainSlot{{now, 2}, {now.Add(5 * time.Minute), 10}}},
		},
		{
			// Cap 50 with 20 slots taken until +10h: 30 now, 20 at +10h, 30
			// at +24h (the first 30 free), the last 20 at +34h.
			name: "rolling daily cap", took: 34 * time.Hour, sendable: 30, limit: "daily_cap",
			m: Mailbox{CapToday: 50, DailyCap: 50, backlog: []drainSlot{{now, 100}}, taken: []drainSlot{{now.Add(10 * time.Hour), 20}}},
		},
		{
			name: "ramp above the daily cap", took: day, sendable: 5, limit: "daily_cap",
			m: Mailbox{CapToday: 5, DailyCap: 5, backlog: []drainSlot{{now, 10}},
				ramp: rampPlan{cap: sendcap.Cap{Daily: 5, Ramp: &sendcap.Ramp{Start: 20, Step: 10, Max: 200, Every: day}}, dueAt: &tomorrow}},
		},
		{
			name: "sent at once", took: 0, sendable: 7, limit: "daily_cap",
			m: Mailbox{CapToday: 50, backlog: []drainSlot{{now, 7}}},
		},
	}
	for _, tc := range cases {
		got := tc.m.drain(now)
		if got.took != tc.took || got.sendableNow != tc.sendable || got.limitedBy != tc.limit {
			t.Errorf("%s: took %s, %d sendable now, limited by %s; want %s, %d, %s", tc.name, got.took, got.sendableNow, got.limitedBy, tc.took, tc.sendable, tc.limit)
		}
	}
}

// The estimate is the slowest mailbox unless the ticks are slower.
func TestEstimateDrain(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 5, 5, 55, 0, 0, time.UTC)
	tomorrow := now.Add(24 * time.Hour)
	samples := []store.OpsTickSample{{StartedAt: now, Claimed: 3}, {StartedAt: now.Add(-time.Minute), Claimed: 3}}
	rampOnly := Mailbox{Overdue: 17, CapToday: 3, backlog: []drainSlot{{now, 17}},
		ramp: rampPlan{cap: sendcap.Cap{Ramp: &sendcap.Ramp{Start: 3, Max: 3, Every: 24 * time.Hour}}, dueAt: &tomorrow}}
	d := estimateDrain([]Mailbox{rampOnly}, samples, now)
	if d.EstimatedSeconds == nil || *d.EstimatedSeconds != 5*24*3600 || d.LimitedBy != "ramp" {
		t.Errorf("ramp-only drain = %+v, want 5 days limited by the ramp", d)
	}
	fast := Mailbox{Overdue: 600, backlog: []drainSlot{{now, 600}}}
	if d := estimateDrain([]Mailbox{fast}, samples, now); *d.EstimatedSeconds != 200*60 || d.LimitedBy != "ticks" {
		t.Errorf("uncapped drain = %+v, want 200 ticks of 3 a minute", d)
	}
}
