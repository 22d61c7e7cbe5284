package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/rindactl/rindactl/internal/bench"
)

// riverConfig sets up one River run: Jobs no-op jobs worked by Workers
// workers of one queue.
type riverConfig struct {
	URL     string
	Jobs    int
	Workers int
	// FetchCooldown and FetchPollInterval are River's own benchmark's
	// settings (cmd/river/riverbench): far quicker than the client's
	// defaults (100 ms, 1 s), which would leave workers idle between
	// fetches and measure the wait, not the queue.
	FetchCooldown     time.Duration
	FetchPollInterval time.Duration
}

// River's own benchmark's fetch settings (cmd/river/riverbench).
const (
	defaultFetchCooldown     = 2 * time.Millisecond
	defaultFetchPollInterval = 20 * time.Millisecond
)

// riverResult is `rindabench river` output, shaped like `rindactl bench
// claim --output json` so scripts/bench.sh reads both alike.
type riverResult struct {
	Jobs       int     `json:"jobs"`
	Workers    int     `json:"workers"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_sec"`
	// CPU per job in microseconds: this process (River's client), and every
	// postgres process on this machine (absent when the server is not local).
	CPUPerRowUS         float64  `json:"cpu_us_per_row"`
	PostgresCPUPerRowUS *float64 `json:"postgres_cpu_us_per_row,omitempty"`
}

// noopArgs is the job: it carries its number so rows are not identical,
// as the claim bench's leads are not.
type noopArgs struct {
	N int `json:"n"`
}

func (noopArgs) Kind() string { return "rindactl_bench_noop" }

// noopWorker does nothing and counts what it did.
type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	worked *atomic.Int64
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	w.worked.Add(1)
	return nil
}

// insertBatch is how many jobs one InsertManyFast call inserts while
// loading (River's own benchmark uses 5,000).
const insertBatch = 5000

// runRiver creates a scratch schema, applies River's migrations into it
// (rivermigrate), inserts cfg.Jobs jobs, then times a River client working
// them until every job is completed in the table, and drops the schema.
func runRiver(ctx context.Context, cfg riverConfig) (res riverResult, err error) {
	pool, err := pgxpool.New(ctx, cfg.URL)
	if err != nil {
		return res, fmt.Errorf("connecting: %w", err)
	}
	defer pool.Close()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	schema := "rindactl_river_" + hex.EncodeToString(b)
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return res, fmt.Errorf("creating scratch schema %s: %w", schema, err)
	}
	defer func() {
		if _, dropErr := pool.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); dropErr != nil {
			err = errors.Join(err, fmt.Errorf("dropping scratch schema %s: %w", schema, dropErr))
		}
	}()

	driver := riverpgxv5.New(pool)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema, Logger: quiet})
	if err != nil {
		return res, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return res, fmt.Errorf("applying River's migrations: %w", err)
	}

	var worked atomic.Int64
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{worked: &worked})
	client, err := river.NewClient(driver, &river.Config{
		Schema:            schema,
		Logger:            quiet,
		FetchCooldown:     cfg.FetchCooldown,
		FetchPollInterval: cfg.FetchPollInterval,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:           workers,
	})
	if err != nil {
		return res, err
	}
	params := make([]river.InsertManyParams, 0, insertBatch)
	for i := 1; i <= cfg.Jobs; i++ {
		params = append(params, river.InsertManyParams{Args: noopArgs{N: i}})
		if len(params) == insertBatch || i == cfg.Jobs {
			if _, err := client.InsertManyFast(ctx, params); err != nil {
				return res, fmt.Errorf("inserting jobs: %w", err)
			}
			params = params[:0]
		}
	}
	// As the claim bench does after its load: statistics as autovacuum
	// would leave them.
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE "+pgx.Identifier{schema, "river_job"}.Sanitize()); err != nil {
		return res, fmt.Errorf("analyzing river_job: %w", err)
	}

	pm, err := bench.Postmaster(ctx, pool)
	if err != nil {
		return res, err
	}
	cpu0 := bench.SampleCPU(pm)
	start := time.Now()
	if err := client.Start(ctx); err != nil {
		return res, err
	}
	waitErr := waitCompleted(ctx, pool, schema, &worked, cfg.Jobs)
	elapsed := time.Since(start).Seconds()
	cpu1 := bench.SampleCPU(pm)
	if err := errors.Join(waitErr, client.Stop(ctx)); err != nil {
		return res, err
	}
	res = riverResult{Jobs: cfg.Jobs, Workers: cfg.Workers, Seconds: elapsed, RowsPerSec: float64(cfg.Jobs) / elapsed}
	res.CPUPerRowUS, res.PostgresCPUPerRowUS = cpu0.PerItem(cpu1, cfg.Jobs)
	return res, nil
}

// waitCompleted returns once every job is recorded completed: the workers'
// count says when all ran, then the table says when River's batched
// completer has written the last of them (polled only from then on, so the
// check costs the run nothing before).
func waitCompleted(ctx context.Context, pool *pgxpool.Pool, schema string, worked *atomic.Int64, jobs int) error {
	const poll = 2 * time.Millisecond
	for worked.Load() < int64(jobs) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
	q := "SELECT count(*) FROM " + pgx.Identifier{schema, "river_job"}.Sanitize() + " WHERE state <> 'completed'"
	for {
		var left int
		if err := pool.QueryRow(ctx, q).Scan(&left); err != nil {
			return fmt.Errorf("counting jobs left: %w", err)
		}
		if left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d jobs not completed: %w", left, jobs, ctx.Err())
		case <-time.After(poll):
		}
	}
}
