package status

import (
	"slices"
	"time"

	"github.com/rindactl/rindactl/internal/sendcap"
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
	// drainEventsMax bounds the simulation of one mailbox (each event is a
	// moment its room or its backlog changes); a year of daily caps is a
	// few hundred.
	drainEventsMax = 100_000
)

// Drain estimates how long the overdue backlog takes to go out.
//
//	sendable_now = Σ over mailboxes of min(overdue that may go now, room now)
//	tick_bound   = ceil(sendable_now / per_tick) × tick_interval
//	mailbox_time = when the mailbox has sent its overdue rows, sending as
//	               much as its cap in force allows as soon as it allows it
//	estimate     = max(tick_bound, max over mailboxes of mailbox_time)
//
// mailbox_time follows what the email claim does (docs/email.md, "Daily
// cap"): a sent message takes a slot of the cap for 24 hours, the slots
// taken now free when their sends age out, the cap in force follows a
// warm-up ramp's growth (daily_cap 0 with a ramp is limited by the ramp
// alone), a row backing off after a refused send may go only when its
// backoff ends, and follow-ups of follow_ups_first campaigns take the room
// first (drain_follow_ups.go), served at the ticks. tick_interval is the
// median gap between the last successful email ticks (TickIntervalDefault
// with fewer than two); per_tick is the most any of them claimed (an
// observed batch). Without a successful tick
// that claimed rows, the throughput is unknown and so is the estimate
// (EstimatedSeconds nil). Blocked steps are not counted: they drain when
// their block ends.
type Drain struct {
	EstimatedSeconds    *int64 `json:"estimated_seconds"`
	TickIntervalSeconds int64  `json:"tick_interval_seconds"`
	PerTick             int64  `json:"per_tick"`
	SendableNow         int64  `json:"sendable_now"`
	// LimitedBy is "ticks", "daily_cap", "ramp" (a warm-up ramp's cap),
	// "backoff" (rows waiting out a retry), "nothing" (no backlog) or
	// "unknown" (no throughput measured).
	LimitedBy string `json:"limited_by"`
}

// drainSlot is n rows (or n taken slots of a cap) from at: when overdue
// rows may go, or when taken slots free.
type drainSlot struct {
	at time.Time
	n  int64
}

func estimateDrain(mailboxes []Mailbox, samples []store.OpsTickSample, now time.Time) Drain {
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
	var slowest time.Duration
	limit := ""
	for _, m := range mailboxes {
		overdue += m.Overdue
		p := m.drainTicks(now, time.Duration(d.TickIntervalSeconds)*time.Second)
		d.SendableNow += p.sendableNow
		if p.took > slowest {
			slowest, limit = p.took, p.limitedBy
		}
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
	if slowest > tickBound {
		d.LimitedBy, est = limit, slowest
	}
	secs := int64(est / time.Second)
	d.EstimatedSeconds = &secs
	return d
}

// mailboxDrain is how one mailbox drains its overdue rows.
type mailboxDrain struct {
	sendableNow int64
	took        time.Duration
	limitedBy   string // "daily_cap", "ramp" or "backoff"
}

// drain simulates the mailbox sending its overdue rows from now: at each
// moment its room or its backlog changes (rows come out of a backoff, slots
// free, the ramp grows), it sends what its room and its backlog allow.
func (m Mailbox) drain(now time.Time) mailboxDrain { return m.drainTicks(now, 0) }

// drainTicks is drain with the mailbox served only at the ticks, every
// tick from now (0: at any instant). A tick serves the follow-ups due by
// then before the backlog, with all the room freed since the last one:
// served at each instant a slot frees, the first steps would take the
// slots their follow-ups, due a moment later, were to take.
func (m Mailbox) drainTicks(now time.Time, tick time.Duration) mailboxDrain {
	backlog := sortedSlots(m.backlog)
	var total int64
	for _, b := range backlog {
		total += b.n
	}
	if total == 0 {
		return mailboxDrain{}
	}
	if m.CapToday == 0 {
		return uncappedDrain(backlog, now)
	}
	ramp := m.ramp
	ramp.capToday = m.CapToday
	sim := capSim{backlog: backlog, taken: sortedSlots(m.taken), ramp: ramp, total: total, tick: tick,
		follow: followUpQueue{ahead: slices.Clone(m.ahead), cascade: slices.Clone(m.cascade)}}
	return sim.run(now)
}

// uncappedDrain: each row goes when it may.
func uncappedDrain(backlog []drainSlot, now time.Time) mailboxDrain {
	var res mailboxDrain
	for _, b := range backlog {
		if !b.at.After(now) {
			res.sendableNow += b.n
		}
	}
	res.took, res.limitedBy = max(backlog[len(backlog)-1].at.Sub(now), 0), "backoff"
	return res
}

func sortedSlots(s []drainSlot) []drainSlot {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b drainSlot) int { return a.at.Compare(b.at) })
	return s
}

// capSim is a capped mailbox's drain in progress.
type capSim struct {
	backlog []drainSlot // overdue rows by when they may go
	// taken are the cap's slots by when they free. Every slot taken before
	// now frees within 24 hours of now (mailbox_cap_slots), and one taken
	// during the simulation 24 hours after it is, so appending keeps the
	// order.
	taken []drainSlot
	ramp  rampPlan
	total int64 // rows to send
	sent  int64
	next  int // first backlog group not yet due
	// follow are the follow-ups that take the room before the backlog.
	follow followUpQueue
	tick   time.Duration // the tick cadence (drainTicks)
}

func (s *capSim) run(now time.Time) mailboxDrain {
	var res mailboxDrain
	t := now
	waited := false // rows were left waiting for room at the last moment
	for range drainEventsMax {
		avail := s.available(t)
		limit, fromRamp := s.ramp.capAt(t)
		room := max(int64(limit)-s.used(t), 0)
		ahead := min(room, s.follow.due(t))
		k := min(room-ahead, avail)
		if t.Equal(now) {
			res.sendableNow = k
		}
		if ahead+k > 0 {
			s.taken = append(s.taken, drainSlot{t.Add(capPeriod), ahead + k})
			s.follow.sendAhead(ahead, t)
			s.follow.sendBacklog(k, t)
			s.sent += k
		}
		if s.sent >= s.total {
			res.took, res.limitedBy = t.Sub(now), drainLimit(waited || t.Equal(now), fromRamp)
			return res
		}
		waited = avail > k
		nt := s.nextChange(t)
		if nt.IsZero() {
			break // the cap can never send the rest
		}
		if s.tick > 0 {
			nt = now.Add((nt.Sub(now) + s.tick - 1) / s.tick * s.tick)
		}
		t = nt
	}
	// A cap that cannot drain (or a simulation past its bound): as far as
	// it got.
	res.took, res.limitedBy = t.Sub(now), "daily_cap"
	return res
}

// available is how many overdue rows may go at t and are not sent yet.
func (s *capSim) available(t time.Time) int64 {
	for s.next < len(s.backlog) && !s.backlog[s.next].at.After(t) {
		s.next++
	}
	n := -s.sent
	for _, b := range s.backlog[:s.next] {
		n += b.n
	}
	return n
}

// used is how many of the cap's slots are taken at t.
func (s *capSim) used(t time.Time) int64 {
	var n int64
	for _, sl := range s.taken {
		if sl.at.After(t) {
			n += sl.n
		}
	}
	return n
}

// nextChange is the first moment after t at which rows come out of a
// backoff, slots free or the ramp grows; the zero time when none will.
func (s *capSim) nextChange(t time.Time) time.Time {
	var nt time.Time
	earliestAfter := func(c time.Time) {
		if c.After(t) && (nt.IsZero() || c.Before(nt)) {
			nt = c
		}
	}
	if s.next < len(s.backlog) {
		earliestAfter(s.backlog[s.next].at)
	}
	if i := slices.IndexFunc(s.taken, func(sl drainSlot) bool { return sl.at.After(t) }); i >= 0 {
		earliestAfter(s.taken[i].at)
	}
	earliestAfter(s.ramp.nextGrowth(t))
	// Follow-ups coming due take the room first.
	earliestAfter(s.follow.next(t))
	return nt
}

// drainLimit names what held the last rows back: the cap in force when
// they waited for room (or all went at once), their backoff otherwise.
func drainLimit(capBound, fromRamp bool) string {
	switch {
	case !capBound:
		return "backoff"
	case fromRamp:
		return "ramp"
	default:
		return "daily_cap"
	}
}

// rampPlan is a mailbox's cap in force over time: its daily cap, lowered by
// a warm-up ramp that grows one level at dueAt and every period after
// (assuming no bounce or pause holds it back). Without a ramp it is
// capToday, the cap in force now.
type rampPlan struct {
	cap      sendcap.Cap
	level    int
	dueAt    *time.Time
	capToday int
}

// capAt is the cap in force at t, and whether the ramp (not the daily cap)
// sets it.
func (r rampPlan) capAt(t time.Time) (limit int, fromRamp bool) {
	rp := r.cap.Ramp
	if rp == nil {
		return r.capToday, false
	}
	level := r.level
	if r.dueAt != nil && rp.Every > 0 && !r.dueAt.After(t) {
		level += int(t.Sub(*r.dueAt)/rp.Every) + 1
	}
	return r.cap.At(level)
}

// nextGrowth is the ramp's first growth after t that raises the cap, or
// the zero time when it no longer grows.
func (r rampPlan) nextGrowth(t time.Time) time.Time {
	rp := r.cap.Ramp
	if rp == nil || rp.Step == 0 || r.dueAt == nil || rp.Every <= 0 {
		return time.Time{}
	}
	if limit, fromRamp := r.capAt(t); !fromRamp || limit >= rp.Max {
		return time.Time{}
	}
	due := *r.dueAt
	if !due.After(t) {
		due = due.Add(rp.Every * (t.Sub(due)/rp.Every + 1))
	}
	return due
}

func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
