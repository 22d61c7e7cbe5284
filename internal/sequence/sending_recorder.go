package sequence

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// groupMax bounds how many rows one INSERT carries.
const groupMax = 100

// groupLinger is how long a group waits for the other sending mailboxes'
// rows. Each mailbox asks for its next row just before sending the current
// message, so the wait hides behind SMTP; without it the mailboxes woken
// by one commit trickle into several small INSERTs, each with its own
// planning, commit and round trip.
const groupLinger = 500 * time.Microsecond

// sendingRecorder group-commits 'sending' rows: each mailbox worker blocks
// until its row is committed (it must be before SMTP), and the workers
// waiting at the same moment share one INSERT and one commit. Each request
// carries the outcomes its mailbox has had since its last one: they are
// settled in the same transaction, so the settles cost no round trip or
// commit of their own, and a mailbox never has more than the message on
// the wire and the one prepared behind it left 'sending' (the crash bound).
type sendingRecorder struct {
	// ctx carries the tick's values but never cancels a write: the reply
	// must say truthfully whether the rows were committed.
	ctx  context.Context
	pool *pgxpool.Pool
	reqs chan sendingReq
	done chan struct{}
	// senders tells how many mailboxes are sending now: a group holding a
	// row of each is complete and need not wait.
	senders func() int
	clock   *tickClock
	tickID  string
	// settled counts outcomes once their group is committed.
	settled func([]outcome)
}

type sendingReq struct {
	start *store.SendStart // nil: only outcomes to settle
	// outcomes are settled with the group.
	outcomes []outcome
	reply    chan sendingReply
}

type sendingReply struct {
	begun store.SendBegun
	err   error
}

func newSendingRecorder(ctx context.Context, pool *pgxpool.Pool, t *emailTick) *sendingRecorder {
	r := &sendingRecorder{ctx: context.WithoutCancel(ctx), pool: pool, reqs: make(chan sendingReq, groupMax),
		done: make(chan struct{}), senders: func() int { return len(t.slots) }, clock: &t.clock,
		tickID: t.opts.TickID, settled: func(g []outcome) { t.count(g) }}
	go r.loop()
	return r
}

// record commits a 'sending' row for start (none when nil) with outcomes
// settled beside it, and reports whether the row was written; not written
// means the step already had one, or another enrollment of the campaign
// mails the address, and it must not be sent. An error means nothing was
// committed: the outcomes' rows stay as they were (a 'sending' one is
// unknown to the next tick, never resent). It never gives up waiting
// before the write is done (a signal included): the outcomes it carries
// must be written or known lost, and the write is one statement.
func (r *sendingRecorder) record(start *store.SendStart, outcomes []outcome) (store.SendBegun, error) {
	reply := make(chan sendingReply, 1)
	r.reqs <- sendingReq{start: start, outcomes: outcomes, reply: reply}
	res := <-reply
	return res.begun, res.err
}

func (r *sendingRecorder) loop() {
	defer close(r.done)
	linger := time.NewTimer(groupLinger)
	linger.Stop()
	for first := range r.reqs {
		group := []sendingReq{first}
		linger.Reset(groupLinger)
	collect:
		for len(group) < groupMax && len(group) < r.senders() {
			select {
			case req, ok := <-r.reqs:
				if !ok {
					break collect
				}
				group = append(group, req)
			case <-linger.C:
				break collect
			}
		}
		linger.Stop()
		starts := make([]store.SendStart, 0, len(group))
		var outcomes []outcome
		for _, req := range group {
			if req.start != nil {
				starts = append(starts, *req.start)
			}
			outcomes = append(outcomes, req.outcomes...)
		}
		began := time.Now()
		written, err := store.BeginSendsSettling(r.ctx, r.pool, starts, r.tickID, merge(outcomes))
		r.clock.since(phaseRecord, began)
		if err == nil {
			r.settled(outcomes)
		}
		for _, req := range group {
			var begun store.SendBegun
			if req.start != nil {
				begun = written[req.start.EnrollmentID]
			}
			req.reply <- sendingReply{begun: begun, err: err}
		}
	}
}

func (r *sendingRecorder) close() {
	close(r.reqs)
	<-r.done
}
