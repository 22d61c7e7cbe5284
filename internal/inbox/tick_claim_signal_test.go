package inbox

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A SIGTERM that lands after the server ran the claim but before the tick
// read its answer must not strand the lease behind a run that says it
// claimed nothing. Under load the answer came after the signal: the lease
// was committed, pgx dropped the connection unread, and tick_runs said 0
// claimed while the mailbox stayed leased until its lease ran out
// (TestInboxTickSIGTERMMidSessionIsNoMailboxFailure under make
// test-stress). The tick's connection here holds back the claim's answer
// until the server has run the statement and the tick was cancelled: that
// order, every time.
func TestInboxTickSignalBeforeTheClaimIsReadLeavesNothingLeased(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	ctx := context.Background()
	g := &answerGate{released: make(chan struct{}), armed: make(chan struct{})}
	cfg, err := pgxpool.ParseConfig(f.tickURL)
	if err != nil {
		t.Fatal(err)
	}
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		return &gatedConn{Conn: c, g: g}, err
	}
	cfg.ConnConfig.Tracer = g
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	tickCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		// The signal first, then the answer: pgx may give up on the
		// connection when it sees the cancel (a deadline, which releases
		// the gate too) or read the answer; either way it comes after the
		// signal. Released here as well, so no read waits on a deadline
		// pgx need not set (a commit run past the signal; the gate hung a
		// make test-stress run for 10 minutes).
		defer g.release()
		defer stop()
		<-g.armed
		// The claim ran in the server: committed (its lease visible), or
		// done in a transaction still open.
		for {
			var done bool
			err := f.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM inbox_checkpoints WHERE locked_by IS NOT NULL)
				OR EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
					AND state = 'idle in transaction' AND query LIKE '-- name: InboxClaim %')`).Scan(&done)
			if err != nil || done {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	rep, err := RunTick(tickCtx, pool, TickOptions{LookupEnv: lookupEnv})
	<-ran
	if err != nil {
		t.Fatalf("tick stopped before reading its claim = %+v, %v; want a clean stop", rep, err)
	}
	pool.Close() // a claim left open in the server ends with its connection

	var claimed, leased int
	for {
		// The server sees the dropped connection when it next reads.
		var open int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND query LIKE '-- name: InboxClaim %'`).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := f.pool.QueryRow(ctx, `SELECT (SELECT claimed FROM tick_runs WHERE kind = 'inbox'),
		(SELECT count(*) FROM inbox_checkpoints WHERE locked_by IS NOT NULL OR last_error IS NOT NULL)`).Scan(&claimed, &leased); err != nil {
		t.Fatal(err)
	}
	if leased != 0 {
		t.Errorf("after a signal before the claim was read: %d mailboxes leased or in error, tick_runs claimed=%d; want none leased", leased, claimed)
	}
	// The next tick reads both mailboxes at once.
	if rep := f.tick(TickOptions{}); rep.Mailboxes != 2 {
		t.Errorf("next tick read %d mailboxes, want both", rep.Mailboxes)
	}
}

// answerGate holds back the answer to the tick's first claim: armed when
// the claim is prepared (before it is executed), released when pgx gives
// up on the connection (it sets a deadline as its context is cancelled)
// or, at the latest, once the tick has been signalled.
type answerGate struct {
	once, releaseOnce  sync1
	armed, released    chan struct{}
	holding, preparing atomic.Bool
}

type sync1 struct{ done atomic.Bool }

func (s *sync1) do(f func()) {
	if s.done.CompareAndSwap(false, true) {
		f()
	}
}

func (g *answerGate) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (g *answerGate) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (g *answerGate) TracePrepareStart(ctx context.Context, _ *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	g.preparing.Store(strings.HasPrefix(data.SQL, "-- name: InboxClaim "))
	return ctx
}

// TracePrepareEnd arms the gate once the claim is prepared: what the
// connection reads next is the claim's answer.
func (g *answerGate) TracePrepareEnd(_ context.Context, _ *pgx.Conn, data pgx.TracePrepareEndData) {
	if data.Err == nil && g.preparing.Load() {
		g.once.do(func() {
			g.holding.Store(true)
			close(g.armed)
		})
	}
}

type gatedConn struct {
	net.Conn
	g *answerGate
}

func (c *gatedConn) Read(b []byte) (int, error) {
	if c.g.holding.Load() {
		<-c.g.released
	}
	return c.Conn.Read(b)
}

func (c *gatedConn) SetDeadline(t time.Time) error {
	err := c.Conn.SetDeadline(t)
	if !t.IsZero() && c.g.holding.Load() {
		c.g.release()
	}
	return err
}

func (g *answerGate) release() {
	g.releaseOnce.do(func() {
		g.holding.Store(false)
		close(g.released)
	})
}
