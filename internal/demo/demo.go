package demo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/benchstore"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Run replays the incident and reports what happened. Everything it starts
// (cluster or scratch database, stand-ins, child processes, the work
// directory) is gone when it returns, unless cfg.Keep.
func Run(ctx context.Context, cfg Config) (rep Report, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	started := time.Now()

	dir, err := os.MkdirTemp(cfg.TempDir, "rindactl-demo-")
	if err != nil {
		return rep, fmt.Errorf("creating the demo's work directory: %w", err)
	}
	defer func() {
		if cfg.Keep {
			cfg.Log("kept the work directory (CSV, campaign, each child's log): %s", dir)
			return
		}
		err = errors.Join(err, os.RemoveAll(dir))
	}()

	cfg.Log("starting the database")
	db, err := openDatabase(ctx, cfg.ServerURL, cfg.Keep, cfg.Log)
	if err != nil {
		return rep, err
	}
	defer func() { err = errors.Join(err, db.close(context.WithoutCancel(ctx))) }()

	credits := int(float64(cfg.Leads) * FindymailShareDefault)
	s, err := startStandIns(credits)
	if err != nil {
		return rep, err
	}
	defer s.Close()

	env := s.env(cfg.providerRate())
	env["DATABASE_URL"] = db.URL
	r := &runner{binary: cfg.Binary, env: childEnv(env), logDir: dir}

	cfg.Log("migrating %s", db.Where)
	if _, err := r.run(ctx, "migrate", "migrate"); err != nil {
		return rep, err
	}
	pool, err := store.Open(ctx, store.Config{URL: db.URL, MaxConns: 2})
	if err != nil {
		return rep, err
	}
	defer pool.Close()

	cfg.Log("seeding %d leads to enrich and %d overdue steps over %d mailboxes", cfg.Leads, cfg.Overdue, cfg.Mailboxes)
	_, stepDelay, _ := cfg.budgets()
	if err := seed(ctx, r, pool, dir, cfg, s.smtp.URL(""), stepDelay); err != nil {
		return rep, err
	}

	rounds, err := runRounds(ctx, r, cfg, pool, s)
	rep.Rounds = rounds
	if err != nil {
		return rep, err
	}
	// Ticks deliver their events as they finish; this picks up any a
	// failed post left behind, as an operator's `events deliver` would.
	if _, err := r.run(ctx, "events-deliver", tickkind.Events.Args()...); err != nil {
		return rep, err
	}

	// What the rounds sent, before the second act: its email tick is not
	// scoped to a workspace, so it also sends the incident's steps that
	// came due meanwhile.
	inRounds, err := benchstore.DemoSentByMailbox(ctx, pool, workspaceName)
	if err != nil {
		return rep, fmt.Errorf("reading the rounds' sends: %w", err)
	}
	cfg.Log("inbox act: a warm-up ramp, then a reply and a bounce read over IMAP")
	inbox, err := runInboxAct(ctx, r, pool, dir, s.smtp.URL(""))
	if err != nil {
		return rep, fmt.Errorf("inbox act: %w", err)
	}
	// Read after every act, so each number is what the database holds at
	// the end (issue 39).
	collected, err := collect(ctx, pool, s, credits, time.Now())
	if err != nil {
		return rep, err
	}
	collected.Rounds, collected.Inbox = rep.Rounds, inbox
	for _, n := range inRounds {
		collected.EmailsSentInRounds += n
	}
	collected.Database, collected.Leads, collected.Overdue, collected.Mailboxes = db.Where, cfg.Leads, cfg.Overdue, cfg.Mailboxes
	collected.DurationMS = time.Since(started).Milliseconds()
	return collected, nil
}

// runRounds runs the rounds on their cadence with the live status line.
func runRounds(ctx context.Context, r *runner, cfg Config, pool *pgxpool.Pool, s *standIns) ([]Round, error) {
	var current atomic.Int64
	if cfg.Status != nil {
		statusCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			liveStatus(statusCtx, cfg.Status, pool, s, func() int { return int(current.Load()) }, cfg.Rounds)
		}()
		defer func() { stop(); <-done }()
	}
	var rounds []Round
	start := time.Now()
	for n := 1; n <= cfg.Rounds; n++ {
		if err := cadence(ctx, start, n-1, cfg.Interval); err != nil {
			return rounds, err
		}
		current.Store(int64(n))
		round, err := runRound(ctx, r, cfg, n)
		if err != nil {
			return rounds, fmt.Errorf("round %d: %w", n, err)
		}
		_, round.FindymailExhausted = s.findymail.quota(time.Time{})
		rounds = append(rounds, round)
		cfg.Log("round %d: %d emails sent, %d leads claimed for enrichment", n, round.EmailsSent, round.Enrich.Claimed)
	}
	return rounds, nil
}

// providerRate is the token-bucket rate the demo gives each provider: fast
// enough to work through the leads in the rounds, slow enough that
// enrichment spans them, as a real backlog does.
func (c Config) providerRate() string {
	_, _, enrich := c.budgets()
	perSec := math.Ceil(float64(c.Leads) * 1.25 / (float64(c.Rounds) * enrich.Seconds()))
	return fmt.Sprintf("%d/s", max(int(perSec), 20))
}
