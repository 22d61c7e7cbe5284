package sequence

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// groupMax bounds how many rows one INSERT carries.
const groupMax = 100

// sendingRecorder group-commits 'sending' rows: each mailbox worker blocks
// until its row is committed (it must be before SMTP), and the workers
// waiting at the same moment share one INSERT and one commit.
type sendingRecorder struct {
	ctx  context.Context
	pool *pgxpool.Pool
	reqs chan sendingReq
	done chan struct{}
}

type sendingReq struct {
	start store.SendStart
	reply chan sendingReply
}

type sendingReply struct {
	recorded bool
	err      error
}

func newSendingRecorder(ctx context.Context, pool *pgxpool.Pool) *sendingRecorder {
	r := &sendingRecorder{ctx: ctx, pool: pool, reqs: make(chan sendingReq, groupMax), done: make(chan struct{})}
	go r.loop()
	return r
}

// record commits a 'sending' row and reports whether it was written; false
// means the step already had one and must not be sent.
func (r *sendingRecorder) record(ctx context.Context, start store.SendStart) (bool, error) {
	reply := make(chan sendingReply, 1)
	select {
	case r.reqs <- sendingReq{start: start, reply: reply}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	res := <-reply
	return res.recorded, res.err
}

func (r *sendingRecorder) loop() {
	defer close(r.done)
	for first := range r.reqs {
		group := []sendingReq{first}
	collect:
		for len(group) < groupMax {
			select {
			case req, ok := <-r.reqs:
				if !ok {
					break collect
				}
				group = append(group, req)
			default:
				break collect
			}
		}
		starts := make([]store.SendStart, len(group))
		for i, req := range group {
			starts[i] = req.start
		}
		// Not cancelled mid-statement by SIGTERM: the reply must say
		// truthfully whether the rows were committed.
		written, err := store.BeginSends(context.WithoutCancel(r.ctx), r.pool, starts)
		for _, req := range group {
			req.reply <- sendingReply{recorded: written[req.start.EnrollmentID], err: err}
		}
	}
}

func (r *sendingRecorder) close() {
	close(r.reqs)
	<-r.done
}
