package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/store/benchstore"
)

// Defaults of `rindactl bench claim`: the batch the raw-SQL floor claims
// (100), and a concurrency that keeps 2 cores busy without a provider's
// latency to hide.
const (
	ClaimBatchDefault       = 100
	ClaimConcurrencyDefault = 4
)

// ClaimConfig sets up a claim-pipeline run.
type ClaimConfig struct {
	URL         string
	Rows        int
	Batch       int
	Concurrency int
}

// ClaimResult is `rindactl bench claim --output json`.
type ClaimResult struct {
	Rows       int     `json:"rows"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_sec"`
	// CPU per row in microseconds: this process, and the server's postgres
	// processes (absent when the server is not on this machine).
	CPUPerRowUS         float64  `json:"cpu_us_per_row"`
	PostgresCPUPerRowUS *float64 `json:"postgres_cpu_us_per_row,omitempty"`
}

// noopFinder answers at once that it found nothing: the pipeline around
// the provider is what is measured, not a provider.
type noopFinder struct{}

func (noopFinder) Name() string { return "noop" }

func (noopFinder) FindEmail(context.Context, enrich.Lead) (enrich.Finding, error) {
	return enrich.Finding{}, nil
}

// Claim loads cfg.Rows due leads into a scratch schema and times enrichment
// ticks (enrich.RunTick: claim with SKIP LOCKED, the waterfall over a
// no-op provider, grouped outcome records) until none is due.
func Claim(ctx context.Context, cfg ClaimConfig) (res ClaimResult, err error) {
	if cfg.Rows < 1 {
		return res, fmt.Errorf("invalid --rows %d: use 1 or more", cfg.Rows)
	}
	if cfg.Batch <= 0 {
		cfg.Batch = ClaimBatchDefault
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = ClaimConcurrencyDefault
	}
	s, err := newScratch(ctx, cfg.URL)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, s.Close(ctx)) }()
	if err := loadDueLeads(ctx, s, cfg.Rows); err != nil {
		return res, err
	}

	pm, err := Postmaster(ctx, s.Pool)
	if err != nil {
		return res, err
	}
	cpu0 := SampleCPU(pm)
	start := time.Now()
	if err := drainEnrichment(ctx, s.Pool, enrich.TickConfig{
		Finders: []enrich.Finder{noopFinder{}}, Batch: cfg.Batch, Concurrency: cfg.Concurrency,
	}, cfg.Rows); err != nil {
		return res, err
	}
	elapsed := time.Since(start).Seconds()
	res = ClaimResult{Rows: cfg.Rows, Seconds: elapsed, RowsPerSec: float64(cfg.Rows) / elapsed}
	res.CPUPerRowUS, res.PostgresCPUPerRowUS = cpu0.PerItem(SampleCPU(pm), cfg.Rows)
	return res, nil
}

// drainEnrichment runs enrichment ticks with cfg until n leads are done
// (cfg's finders find nothing: each lead ends not_found).
func drainEnrichment(ctx context.Context, pool *pgxpool.Pool, cfg enrich.TickConfig, n int) error {
	cfg.MaxDuration = time.Hour
	for done := 0; done < n; {
		rep, err := enrich.RunTick(ctx, pool, cfg)
		if err != nil {
			return err
		}
		if rep.Claimed == 0 {
			return fmt.Errorf("bench: the enrichment queue stopped with %d of %d leads done", done, n)
		}
		done += rep.Outcomes.NotFound
	}
	return nil
}

// loadDueLeads inserts n leads, each with a due enrichment row, in two
// server-side statements.
func loadDueLeads(ctx context.Context, s *scratch, n int) error {
	if err := benchstore.BenchSeedDueLeads(ctx, s.Pool, n); err != nil {
		return err
	}
	return s.analyze(ctx, "leads", "lead_enrichment")
}
