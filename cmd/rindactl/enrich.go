package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/credits"
	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

func newCmdEnrich(f *Factory) *cobra.Command {
	return groupCommand("enrich", "Lead enrichment: run one bounded enrichment tick",
		"Lead enrichment finds email addresses for leads through providers (Hunter, Findymail, MillionVerifier).",
		newCmdEnrichTick(f))
}

// EnrichTickOptions holds the flags of `rindactl enrich tick`.
type EnrichTickOptions struct {
	f         *Factory
	Providers []string
	Verify    string
	tickBounds
	Concurrency   int
	NegativeCache time.Duration
	MaxAttempts   int
	Workspace     string
	Nice          int
	tickOutputs
	// Guard guards every provider call (breaker, bucket, ceiling); nil
	// means the Postgres guard configured from the environment.
	Guard enrich.Guard
}

func newCmdEnrichTick(f *Factory) *cobra.Command {
	opts := &EnrichTickOptions{f: f}
	cmd := &cobra.Command{
		Use:   "tick",
		Short: "Claim a bounded batch of due leads, enrich them, record outcomes, exit",
		Long: `Run one bounded enrichment tick: claim due leads in rounds of --batch (with
FOR UPDATE SKIP LOCKED and a --lease, so any number of ticks may run at
once), try the --providers in order for each lead with at most
--concurrency calls in flight, record the outcomes, and exit. At
--max-duration or on SIGTERM the tick stops claiming, releases the leads
it has not worked, records its run and exits 0.

Outcomes: enriched (address found, and deliverable when --verify is set:
an undeliverable address counts as that provider's miss and the next one
is tried); not_found (every provider missed, or the lead has no domain or
name: no call is made); pending (a transient failure, retried after
max(Retry-After, exponential backoff with full jitter from 30s to 1h));
enrichment_failed (after --max-attempts transient failures; only
"rindactl requeue" revives it); unreachable (a provider's quota is used up:
parked for --negative-cache, then retried by itself).

A provider that answers with a quota error gets no more calls from this
tick for that workspace and its leads go on to the next provider; until a
provider has answered once, the tick sends it one call at a time. Calls
wait for their providers' rate slots up to --max-duration, so a tick works
at its buckets' pace (rate_wait_ms in the JSON is the total wait).

Provider keys come from RINDA_<PROVIDER>_API_KEY. A provider without a key
on this host is left out of the tick (said once on stderr, nothing shared
is written); with no usable finder the tick exits 2. A workspace with its
own key ('rindactl workspace set-key') calls with it, on its own token
bucket and credits; the stored keys open with RINDA_SECRET_KEY (or
RINDA_SECRET_KEY_FILE): without it, or with the wrong one, the tick exits 2.

See docs/enrichment.md for the state machine.`,
		Example: `  # what cron runs every minute
  rindactl enrich tick

  # Hunter only, verified, one workspace, machine-readable summary
  rindactl enrich tick --providers hunter --verify millionverifier --workspace acme --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.LeaseSet = cmd.Flags().Changed("lease")
			return enrichTickRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Providers, "providers", enrichProvidersDefault, "finders to try, in order: "+strings.Join(provider.Finders(), ", "))
	fl.StringVar(&opts.Verify, "verify", "", "verifier for found addresses: "+strings.Join(provider.Verifiers(), ", ")+" (default: none)")
	fl.IntVar(&opts.Batch, "batch", enrich.BatchDefault, "leads claimed per round")
	fl.IntVar(&opts.Concurrency, "concurrency", enrich.ConcurrencyDefault, "leads worked at once")
	fl.DurationVar(&opts.MaxDuration, "max-duration", enrich.MaxDurationDefault, "stop claiming after this long")
	fl.DurationVar(&opts.Lease, "lease", enrich.LeaseDefault, leaseFlagHelp("the provider HTTP timeout (RINDA_<PROVIDER>_TIMEOUT, default "+providerhttp.TimeoutDefault.String()+")"))
	fl.DurationVar(&opts.NegativeCache, "negative-cache", enrich.NegativeCacheDefault, "how long a lead stays unreachable after a quota answer")
	fl.IntVar(&opts.MaxAttempts, "max-attempts", enrich.MaxAttemptsDefault, "transient failures before a lead is enrichment_failed")
	fl.StringVarP(&opts.Workspace, "workspace", "w", "", "work only this workspace's leads (default: all)")
	fl.IntVar(&opts.Nice, "nice", 10, "raise this tick's niceness by N so email keeps its pace on a shared host (0: leave it)")
	opts.tickOutputs.register(cmd)
	return cmd
}

// enrichProvidersDefault are the finders of an enrich tick without
// --providers: what a generated unit runs, and what doctor checks.
var enrichProvidersDefault = []string{"findymail", "hunter"}

func enrichTickRun(ctx context.Context, opts *EnrichTickOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	switch {
	case opts.Batch < 1 || opts.Batch > 10000:
		return usageError("invalid --batch %d: use 1 to 10000", opts.Batch)
	case opts.Concurrency < 1 || opts.Concurrency > 1000:
		return usageError("invalid --concurrency %d: use 1 to 1000", opts.Concurrency)
	case opts.MaxDuration <= 0:
		return usageError("invalid --max-duration %s: use a positive duration like 50s", opts.MaxDuration)
	case opts.NegativeCache <= 0:
		return usageError("invalid --negative-cache %s: use a positive duration like 24h", opts.NegativeCache)
	case opts.MaxAttempts < 1:
		return usageError("invalid --max-attempts %d: use 1 or more", opts.MaxAttempts)
	}
	cfg := enrich.TickConfig{
		Guard: opts.Guard, Batch: opts.Batch, Concurrency: opts.Concurrency,
		MaxDuration: opts.MaxDuration, NegativeCache: opts.NegativeCache,
		MaxAttempts: opts.MaxAttempts, Logger: opts.f.Logger(),
	}
	var seen []string
	for _, name := range opts.Providers {
		name = strings.ToLower(strings.TrimSpace(name))
		if slices.Contains(seen, name) {
			return usageError("--providers names %q twice", name)
		}
		seen = append(seen, name)
		fd, err := provider.NewFinder(name, opts.f.Getenv, provider.WithLogger(opts.f.Logger()))
		if err != nil {
			return usageError("--providers: %v", err)
		}
		cfg.Finders = append(cfg.Finders, fd)
	}
	if len(cfg.Finders) == 0 {
		return usageError("--providers is empty: name at least one of %s", strings.Join(provider.Finders(), ", "))
	}
	if opts.Verify != "" {
		if cfg.Verifier, err = provider.NewVerifier(opts.Verify, opts.f.Getenv, provider.WithLogger(opts.f.Logger())); err != nil {
			return usageError("--verify: %v", err)
		}
		seen = append(seen, cfg.Verifier.Name())
	}
	for _, name := range seen {
		t, err := providerhttp.TimeoutFromEnv(name, opts.f.Getenv)
		if err != nil {
			return usageError("%v", err)
		}
		cfg.CallTimeout = max(cfg.CallTimeout, t)
	}
	if err := opts.fitLease(tick.Grace{Duration: cfg.CallTimeout, What: "the provider HTTP timeout " + cfg.CallTimeout.String()}); err != nil {
		return err
	}

	cfg.Lease = opts.Lease
	ccfg, err := credits.ConfigFromEnv(opts.f.Getenv, seen...)
	if err != nil {
		return usageError("%v", err)
	}
	lowerPriority(opts.Nice, opts.f.Logger())
	started := time.Now()
	pool, err := opts.f.OpenTickDB(ctx, tickkind.Enrich)
	if err != nil {
		return err
	}
	defer pool.Close()
	m := metrics.NewMetrics()
	if cfg.Guard == nil {
		gcfg, err := guard.ConfigFromEnv(opts.f.Getenv, seen...)
		if err != nil {
			return usageError("%v", err)
		}
		cfg.Guard = guard.New(pool, gcfg, m)
	}
	if err := ownKeys(ctx, opts.f, pool, &cfg); err != nil {
		return err
	}
	if opts.Workspace != "" {
		if cfg.WorkspaceID, err = store.WorkspaceID(ctx, pool, opts.Workspace); err != nil {
			if errors.Is(err, store.ErrNoWorkspace) {
				return usageError("--workspace: unknown workspace %q (list them with 'rindactl workspace list')", opts.Workspace)
			}
			return err
		}
	}

	rep, err := enrich.RunTick(ctx, pool, cfg)
	var cerr *enrich.ConfigError
	if errors.As(err, &cerr) {
		return usageError("%v", cerr)
	}
	if err == nil {
		for outcome, n := range rep.Outcomes.Map() {
			m.AddLeads(outcome, n)
		}
		m.ObserveOutcomes(string(tickkind.Enrich), rep.Outcomes.Map())
		watchCredits(ctx, opts.f, pool, ccfg, cfg, m)
	}
	afterTick(ctx, opts.f, pool, tickkind.Enrich, m, started, opts.MaxDuration, err == nil, opts.tickOutputs)
	if err != nil {
		return err
	}
	ios := opts.f.IO
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	o := rep.Outcomes
	n := cliio.Thousands[int]
	fmt.Fprintf(ios.Out, "tick %s claimed %s: %s enriched, %s not_found, %s pending, %s unreachable, %s enrichment_failed; calls %s; %dms\n",
		rep.TickID, n(rep.Claimed), n(o.Enriched), n(o.NotFound), n(o.Pending), n(o.Unreachable), n(o.EnrichmentFailed), cliio.Counts(rep.ProviderCalls, "=", " "), rep.DurationMS)
	return nil
}

// ownKeys opens the workspaces' own provider keys and gives cfg their
// adapters. A missing or wrong master key is a usage error (exit 2).
func ownKeys(ctx context.Context, f *Factory, pool *pgxpool.Pool, cfg *enrich.TickConfig) error {
	keys, err := secrets.Load(ctx, pool, f.Getenv)
	var kerr *secrets.ConfigError
	if errors.As(err, &kerr) {
		return usageError("%v", kerr)
	}
	if err != nil {
		return err
	}
	var finders []string
	for _, fd := range cfg.Finders {
		finders = append(finders, fd.Name())
	}
	verifier := ""
	if cfg.Verifier != nil {
		verifier = cfg.Verifier.Name()
	}
	cfg.OwnFinders, cfg.OwnVerifiers, err = provider.OwnAdapters(keys, finders, verifier, f.Getenv, provider.WithLogger(f.Logger()))
	if err != nil {
		return usageError("%v", err)
	}
	return nil
}

// watchCredits reads the credits of the tick's provider accounts when they
// are due (at most once per RINDA_CREDITS_REFRESH across all processes),
// alerts when a runway runs short (credits_low, delivered with the other
// events right after) and puts the credits in the tick's metrics. It never
// fails the tick: a problem is logged and the next tick tries again.
func watchCredits(ctx context.Context, f *Factory, pool *pgxpool.Pool, ccfg credits.Config, cfg enrich.TickConfig, m *metrics.Metrics) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*ccfg.ReadTimeout)
	defer cancel()
	var host []any
	for _, fd := range cfg.Finders {
		host = append(host, fd)
	}
	if cfg.Verifier != nil {
		host = append(host, cfg.Verifier)
	}
	rows, err := credits.Refresh(ctx, pool, ccfg, credits.AccountsOf(host, cfg.OwnFinders, cfg.OwnVerifiers), f.Logger())
	if err != nil {
		f.Logger().Warn("reading provider credits failed; the next tick tries again", "component", "credits", "error", err.Error())
	}
	for _, r := range rows {
		if r.Credits == nil {
			continue
		}
		key := "host"
		if r.Workspace != "" {
			key = r.Workspace
		}
		m.CreditsRemaining(r.Provider, key, *r.Credits)
	}
}
