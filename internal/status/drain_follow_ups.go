package status

import (
	"slices"
	"time"

	"github.com/rindactl/rindactl/internal/store"
)

// drainHorizon is how far ahead the drain estimate reads the schedule's
// follow-ups: past it, a backlog is months of sending and the estimate's
// order of magnitude is what an operator needs.
const drainHorizon = 60 * 24 * time.Hour

// followUps are rows that take a capped mailbox's room before its overdue
// backlog (follow_ups_first, the claim's priority): n rows due at at, each
// followed by steps after delays (the first delay after it is sent).
type followUps struct {
	at     time.Time
	n      int64
	delays []time.Duration
}

// attachFollowUps gives each capped mailbox of e the follow-ups of its
// follow_ups_first campaigns: those the schedule has due (ahead) and the
// steps its overdue rows will bring once sent (cascade). mailboxes are
// e.Mailboxes' rows, in the same order.
func attachFollowUps(e *Email, mailboxes []store.OpsMailbox, rows []store.OpsFollowUp) {
	index := make(map[int64]int, len(mailboxes))
	for i, m := range mailboxes {
		index[m.ID] = i
	}
	for _, r := range rows {
		i, ok := index[r.MailboxID]
		if !ok {
			continue
		}
		f := followUps{at: r.At, n: r.N, delays: r.Delays}
		if r.Overdue {
			e.Mailboxes[i].cascade = append(e.Mailboxes[i].cascade, f)
		} else {
			e.Mailboxes[i].ahead = append(e.Mailboxes[i].ahead, f)
		}
	}
	for i := range e.Mailboxes {
		sortFollowUps(e.Mailboxes[i].ahead)
	}
}

func sortFollowUps(f []followUps) {
	slices.SortStableFunc(f, func(a, b followUps) int { return a.at.Compare(b.at) })
}

// followUpQueue is a capped mailbox's follow-ups during the simulation:
// ahead take the room first as they come due; cascade are the overdue
// rows' next steps, scheduled as the backlog is sent.
type followUpQueue struct {
	ahead   []followUps // by at
	cascade []followUps
}

// due is how many follow-ups are due at t.
func (q *followUpQueue) due(t time.Time) int64 {
	var n int64
	for _, f := range q.ahead {
		if f.at.After(t) {
			break
		}
		n += f.n
	}
	return n
}

// next is when the first follow-up not yet due at t comes due; zero when
// none will.
func (q *followUpQueue) next(t time.Time) time.Time {
	for _, f := range q.ahead {
		if f.at.After(t) {
			return f.at
		}
	}
	return time.Time{}
}

// sendAhead sends k due follow-ups at t, earliest first: each brings its
// next step.
func (q *followUpQueue) sendAhead(k int64, t time.Time) {
	var next []followUps
	for k > 0 && len(q.ahead) > 0 && !q.ahead[0].at.After(t) {
		f := &q.ahead[0]
		m := min(k, f.n)
		next = append(next, followUps{n: m, delays: f.delays})
		f.n -= m
		k -= m
		if f.n == 0 {
			q.ahead = q.ahead[1:]
		}
	}
	q.schedule(next, t)
}

// sendBacklog records k overdue rows sent at t: those of follow_ups_first
// campaigns bring their next step.
func (q *followUpQueue) sendBacklog(k int64, t time.Time) {
	var next []followUps
	for k > 0 && len(q.cascade) > 0 {
		f := &q.cascade[0]
		m := min(k, f.n)
		next = append(next, followUps{n: m, delays: f.delays})
		f.n -= m
		k -= m
		if f.n == 0 {
			q.cascade = q.cascade[1:]
		}
	}
	q.schedule(next, t)
}

// schedule puts the next step of rows sent at t in the queue.
func (q *followUpQueue) schedule(sent []followUps, t time.Time) {
	added := false
	for _, f := range sent {
		if len(f.delays) == 0 || f.n == 0 {
			continue
		}
		q.ahead = append(q.ahead, followUps{at: t.Add(f.delays[0]), n: f.n, delays: f.delays[1:]})
		added = true
	}
	if added {
		sortFollowUps(q.ahead)
	}
}
