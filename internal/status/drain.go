package status

import (
	"slices"
	"time"

	"github.com/rindactl/rindactl/internal/store"
)

// Defaults of the drain estimate.
const (
	// TickIntervalDefault is the email tick cadence assumed when fewer than
	// two successful ticks are recorded: the schedule's every-minute timer.
	TickIntervalDefault = time.Minute
	// cadenceSamples is how many recent successful ticks the cadence and
	// per-tick throughput are measured over.
	cadenceSamples = 11
	// capPeriod is the window the daily cap counts sends over.
	capPeriod = 24 * time.Hour
)

// Drain estimates how long the overdue backlog takes to go out.
//
//	sendable_now = Σ over mailboxes of min(overdue, remaining cap)   (uncapped: overdue)
//	tick_bound   = ceil(sendable_now / per_tick) × tick_interval
//	cap_bound    = max over capped mailboxes of ceil((overdue − remaining) / daily_cap) × 24h
//	estimate     = max(tick_bound, cap_bound)
//
// tick_interval is the median gap between the last successful email ticks
// (TickIntervalDefault with fewer than two); per_tick is the most any of them
// claimed (an observed batch). Without a successful tick that claimed rows,
// the throughput is unknown and so is the estimate (EstimatedSeconds nil).
// Blocked steps are not counted: they drain when their block ends.
type Drain struct {
	EstimatedSeconds    *int64 `json:"estimated_seconds"`
	TickIntervalSeconds int64  `json:"tick_interval_seconds"`
	PerTick             int64  `json:"per_tick"`
	SendableNow         int64  `json:"sendable_now"`
	// LimitedBy is "ticks", "daily_cap", "nothing" (no backlog) or
	// "unknown" (no throughput measured).
	LimitedBy string `json:"limited_by"`
}

func estimateDrain(mailboxes []Mailbox, samples []store.OpsTickSample) Drain {
	d := Drain{TickIntervalSeconds: int64(TickIntervalDefault / time.Second)}
	var gaps []time.Duration
	for i, s := range samples {
		d.PerTick = max(d.PerTick, int64(s.Claimed))
		if i > 0 {
			gaps = append(gaps, samples[i-1].StartedAt.Sub(s.StartedAt))
		}
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		d.TickIntervalSeconds = max(int64(gaps[len(gaps)/2]/time.Second), 1)
	}

	var overdue int64
	var capBound time.Duration
	for _, m := range mailboxes {
		overdue += m.Overdue
		if m.Remaining < 0 || m.Overdue <= m.Remaining {
			d.SendableNow += m.Overdue
			continue
		}
		d.SendableNow += m.Remaining
		days := ceilDiv(m.Overdue-m.Remaining, int64(m.DailyCap))
		capBound = max(capBound, time.Duration(days)*capPeriod)
	}
	switch {
	case overdue == 0:
		d.LimitedBy = "nothing"
		zero := int64(0)
		d.EstimatedSeconds = &zero
		return d
	case d.PerTick == 0:
		d.LimitedBy = "unknown"
		return d
	}
	tickBound := time.Duration(ceilDiv(d.SendableNow, d.PerTick)*d.TickIntervalSeconds) * time.Second
	d.LimitedBy = "ticks"
	est := tickBound
	if capBound > tickBound {
		d.LimitedBy = "daily_cap"
		est = capBound
	}
	secs := int64(est / time.Second)
	d.EstimatedSeconds = &secs
	return d
}

func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
