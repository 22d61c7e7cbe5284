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
// waiting at the same moment share one INSERT and one commit.
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
}

type sendingReq struct {
	start store.SendStart
	reply chan sendingReply
}

type sendingReply struct {
	begun store.SendBegun
	err   error
}

func newSendingRecorder(ctx context.Context, pool *pgxpool.Pool, senders func() int, clock *tickClock) *sendingRecorder {
	r := &sendingRecorder{ctx: context.WithoutCancel(ctx), pool: pool, reqs: make(chan sendingReq, groupMax),
		done: make(chan struct{}), senders: senders, clock: clock}
	go r.loop()
	return r
}

// record commits a 'sending' row and reports whether it was written; not
// written means the step already had one, or another enrollment of the
// campaign mails the address, and it must not be sent.
func (r *sendingRecorder) record(ctx context.Context, start store.SendStart) (store.SendBegun, error) {
	reply := make(chan sendingReply, 1)
	select {
	case r.reqs <- sendingReq{start: start, reply: reply}:
	case <-ctx.Done():
		return store.SendBegun{}, ctx.Err()
	}
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
		starts := make([]store.SendStart, len(group))
		for i, req := range group {
			starts[i] = req.start
		}
		began := time.Now()
		written, err := store.BeginSends(r.ctx, r.pool, starts)
		r.clock.since(phaseRecord, began)
		for _, req := range group {
			req.reply <- sendingReply{begun: written[req.start.EnrollmentID], err: err}
		}
	}
}

func (r *sendingRecorder) close() {
	close(r.reqs)
	<-r.done
}
