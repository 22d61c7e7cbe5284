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
	"github.com/spf13/pflag"

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
		"Lead enrichment finds email addresses for leads through providers (Hunter, Findymail, MillionVerifier).")
}

// EnrichTickOptions holds the flags of `rindactl enrich tick` that are its
// own (the frame holds the bounding and output flags), and what prepare
// made of them.
type EnrichTickOptions struct {
	Providers     []string
	Verify        string
	NegativeCache time.Duration
	MaxAttempts   int
	Workspace     string

	cfg enrich.TickConfig
	// names are the providers of the tick, finders then the verifier.
	names   []string
	guard   guard.Config
	credits credits.Config
}

// enrichTick is the enrichment tick kind: the provider waterfall over due
// leads, at a lower CPU priority than email.
func enrichTick() tickCommand {
	opts := &EnrichTickOptions{}
	return &tickSpec[enrich.Report]{
		kind: tickkind.Enrich,
		cmd: &cobra.Command{
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
		},
		bounds: tickBoundSpecs{
			Batch:       &intBound{Default: enrich.BatchDefault, Max: tickBatchMax, Help: "leads claimed per round"},
			Concurrency: &intBound{Default: enrich.ConcurrencyDefault, Max: tickConcurrencyMax, Help: "leads worked at once"},
			MaxDuration: durationBound{Default: enrich.MaxDurationDefault, Help: "stop claiming after this long"},
			Lease: &leaseBound{Default: enrich.LeaseDefault,
				Grace:     providerGrace(providerhttp.TimeoutDefault),
				GraceHelp: "the provider HTTP timeout (RINDA_<PROVIDER>_TIMEOUT, default " + providerhttp.TimeoutDefault.String() + ")"},
			Nice: &niceBound{Default: 10, Help: "raise this tick's niceness by N so email keeps its pace on a shared host (0: leave it)"},
		},
		flags: func(fl *pflag.FlagSet) {
			fl.StringSliceVar(&opts.Providers, "providers", enrichProvidersDefault, "finders to try, in order: "+strings.Join(provider.Finders(), ", "))
			fl.StringVar(&opts.Verify, "verify", "", "verifier for found addresses: "+strings.Join(provider.Verifiers(), ", ")+" (default: none)")
			fl.DurationVar(&opts.NegativeCache, "negative-cache", enrich.NegativeCacheDefault, "how long a lead stays unreachable after a quota answer")
			fl.IntVar(&opts.MaxAttempts, "max-attempts", enrich.MaxAttemptsDefault, "transient failures before a lead is enrichment_failed")
			fl.StringVarP(&opts.Workspace, "workspace", "w", "", "work only this workspace's leads (default: all)")
		},
		prepare:   opts.prepare,
		providers: opts.providerNames,
		work:      opts.work,
		counts:    func(rep *enrich.Report) map[string]int { return rep.Outcomes.Map() },
		text:      printEnrichReport,
	}
}

// enrichProvidersDefault are the finders of an enrich tick without
// --providers: what a generated unit runs, and what doctor checks.
var enrichProvidersDefault = []string{"findymail", "hunter"}

// providerGrace is the enrich tick's grace: a call begun before
// --max-duration runs at most the longest provider HTTP timeout past it.
func providerGrace(timeout time.Duration) tick.Grace {
	return tick.Grace{Duration: timeout, What: "the provider HTTP timeout " + timeout.String()}
}

// prepare builds the providers and reads the guard's, the credits' and
// the timeouts' configuration: everything that needs no database.
func (opts *EnrichTickOptions) prepare(t *tickEnv) error {
	switch {
	case opts.NegativeCache <= 0:
		return fmt.Errorf("invalid --negative-cache %s: use a positive duration like 24h", opts.NegativeCache)
	case opts.MaxAttempts < 1:
		return fmt.Errorf("invalid --max-attempts %d: use 1 or more", opts.MaxAttempts)
	}
	if err := opts.adapters(t.f); err != nil {
		return err
	}
	opts.cfg.CallTimeout = t.Settings.CallTimeout
	t.Grace = providerGrace(opts.cfg.CallTimeout)
	opts.cfg.InDoubtRetryAfter = t.Settings.InDoubtRetry
	opts.credits, opts.guard = t.Settings.Credits, t.Settings.Guard
	return nil
}

// providerNames are the providers the tick's settings are read for: the
// --providers finders, then the --verify verifier.
func (opts *EnrichTickOptions) providerNames() []string {
	var names []string
	for _, name := range append(slices.Clone(opts.Providers), opts.Verify) {
		if name = strings.ToLower(strings.TrimSpace(name)); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// adapters builds the --providers finders, in order, and the --verify
// verifier, on this host's keys.
func (opts *EnrichTickOptions) adapters(f *Factory) error {
	for _, name := range opts.Providers {
		name = strings.ToLower(strings.TrimSpace(name))
		if slices.Contains(opts.names, name) {
			return fmt.Errorf("--providers names %q twice", name)
		}
		opts.names = append(opts.names, name)
		fd, err := provider.NewFinder(name, f.Getenv, provider.WithLogger(f.Logger()))
		if err != nil {
			return fmt.Errorf("--providers: %w", err)
		}
		opts.cfg.Finders = append(opts.cfg.Finders, fd)
	}
	if len(opts.cfg.Finders) == 0 {
		return fmt.Errorf("--providers is empty: name at least one of %s", strings.Join(provider.Finders(), ", "))
	}
	if opts.Verify == "" {
		return nil
	}
	v, err := provider.NewVerifier(opts.Verify, f.Getenv, provider.WithLogger(f.Logger()))
	if err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	opts.cfg.Verifier = v
	opts.names = append(opts.names, v.Name())
	return nil
}

// work runs the tick: the guard on this database, the workspaces' own
// keys, the --workspace filter, then enrich.RunTick, and on success the
// running totals and the providers' credits.
func (opts *EnrichTickOptions) work(ctx context.Context, t *tickEnv) (*enrich.Report, error) {
	cfg := opts.cfg
	cfg.Batch, cfg.Concurrency, cfg.MaxDuration, cfg.Lease = t.Batch, t.Concurrency, t.MaxDuration, t.Lease
	cfg.NegativeCache, cfg.MaxAttempts, cfg.Logger = opts.NegativeCache, opts.MaxAttempts, t.f.Logger()
	cfg.Guard = guard.New(t.Pool, opts.guard, t.Metrics)
	if err := ownKeys(ctx, t.f, t.Pool, &cfg); err != nil {
		return nil, err
	}
	var err error
	if cfg.WorkspaceID, err = workspaceFilter(ctx, t.Pool, opts.Workspace); err != nil {
		return nil, err
	}
	watch := watchCredits(ctx, t.f, t.Pool, opts.credits, cfg)
	rep, err := enrich.RunTick(ctx, t.Pool, cfg)
	watch.stop(t.Metrics)
	var cerr *enrich.ConfigError
	if errors.As(err, &cerr) {
		return nil, usageError("%v", cerr)
	}
	if rep.TickID == "" {
		return nil, err // it never started: no run recorded, nothing to report
	}
	if err == nil {
		for outcome, n := range rep.Outcomes.Map() {
			t.Metrics.AddLeads(outcome, n)
		}
	}
	return &rep, err
}

// workspaceFilter is the id of --workspace name; 0 (all) when empty.
func workspaceFilter(ctx context.Context, pool *pgxpool.Pool, name string) (int64, error) {
	if name == "" {
		return 0, nil
	}
	id, err := store.WorkspaceID(ctx, pool, name)
	if errors.Is(err, store.ErrNoWorkspace) {
		return 0, usageError("--workspace: unknown workspace %q (list them with 'rindactl workspace list')", name)
	}
	return id, err
}

func printEnrichReport(ios *cliio.IO, rep *enrich.Report) {
	o := rep.Outcomes
	n := cliio.Thousands[int]
	fmt.Fprintf(ios.Out, "tick %s claimed %s: %s enriched, %s not_found, %s pending, %s unreachable, %s enrichment_failed; calls %s; %dms\n",
		rep.TickID, n(rep.Claimed), n(o.Enriched), n(o.NotFound), n(o.Pending), n(o.Unreachable), n(o.EnrichmentFailed), cliio.Counts(rep.ProviderCalls, "=", " "), rep.DurationMS)
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

// creditsCheckEvery is how often a tick checks its accounts' runways
// while it works: a fast burn raises credits_low before the quota answer.
const creditsCheckEvery = 2 * time.Second

// creditsWatch is a tick's watch over its provider accounts' credits.
type creditsWatch struct {
	f     *Factory
	pool  *pgxpool.Pool
	cfg   credits.Config
	accts []credits.Account
	done  chan struct{}
	quit  context.CancelFunc
}

// watchCredits starts watching the credits of the tick's provider
// accounts: it reads those that are due (at most once per
// RINDA_CREDITS_REFRESH across all processes) at the tick's start, never
// once the tick's deadline has passed or a signal came (ctx), the reading
// bounded by the tick's deadline plus the provider timeout; then, until
// stop, it checks every creditsCheckEvery the runways by the ledger's calls
// billed since each reading, alerting when one runs short (credits_low,
// delivered with the other events after the tick). It never fails the
// tick: a problem is logged and the next check or tick tries again.
func watchCredits(ctx context.Context, f *Factory, pool *pgxpool.Pool, ccfg credits.Config, cfg enrich.TickConfig) *creditsWatch {
	var host []any
	for _, fd := range cfg.Finders {
		host = append(host, fd)
	}
	if cfg.Verifier != nil {
		host = append(host, cfg.Verifier)
	}
	deadline := time.Now().Add(cfg.MaxDuration)
	ccfg.ReadUntil = deadline.Add(cfg.CallTimeout)
	w := &creditsWatch{f: f, pool: pool, cfg: ccfg, accts: credits.AccountsOf(host, cfg.OwnFinders, cfg.OwnVerifiers), done: make(chan struct{})}
	// The tick ending early does not end reads: a tick with little to do
	// still reads its due accounts (within its deadline).
	reads, cancelReads := context.WithDeadline(ctx, deadline)
	checks, quit := context.WithCancel(context.WithoutCancel(ctx))
	w.quit = quit
	go func() {
		defer close(w.done)
		defer cancelReads()
		if _, err := credits.Refresh(reads, pool, ccfg, w.accts, f.Logger()); err != nil {
			w.warn(err)
		}
		for tick.Sleep(checks, creditsCheckEvery) == nil {
			if _, err := credits.Check(checks, pool, ccfg, w.accts, f.Logger()); err != nil && checks.Err() == nil {
				w.warn(err)
			}
		}
	}()
	return w
}

func (w *creditsWatch) warn(err error) {
	w.f.Logger().Warn("reading or checking provider credits failed; the next tick tries again", "component", "credits", "error", err.Error())
}

// stop ends the watch (once its start's readings are in, each bounded by
// the tick's deadline plus the provider timeout), checks
// the runways once more after the tick's last calls, and puts the credits
// left and their runway in the tick's metrics. Nothing is read from a
// provider here.
func (w *creditsWatch) stop(m *metrics.Metrics) {
	w.quit()
	<-w.done
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.ReadTimeout)
	defer cancel()
	rows, err := credits.Check(ctx, w.pool, w.cfg, w.accts, w.f.Logger())
	if err != nil {
		w.warn(err)
	}
	for _, r := range rows {
		if r.Credits == nil {
			continue
		}
		key := "host"
		if r.Workspace != "" {
			key = r.Workspace
		}
		st, err := credits.AccountStanding(ctx, w.pool, r.Provider, r.WorkspaceID, r.Credits, r.CreditsAt)
		if err != nil {
			w.warn(err)
			continue
		}
		m.CreditsRemaining(r.Provider, key, st.Left)
		if st.Known {
			m.ProviderRunway(r.Provider, key, st.Runway)
		}
	}
}
