package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/bench"
	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store/benchstore"
)

// BenchStormOptions holds the flags of `rindabench bench storm`.
type BenchStormOptions struct {
	f             *Factory
	Leads         int
	Batch         int
	Concurrency   int
	HunterLatency time.Duration
	Duration      time.Duration
	Schema        string
	TickBinary    string
	Output        string
}

func newCmdBenchStorm(f *Factory) *cobra.Command {
	opts := &BenchStormOptions{f: f}
	cmd := &cobra.Command{
		Use:   "storm",
		Short: "Run the incident's enrichment storm against provider stand-ins until stopped",
		Long: `Load --leads due leads into a scratch schema and run "rindactl enrich tick
--batch 1000 --concurrency 25" processes one after another against
in-process provider stand-ins: Findymail out of credits (its real quota
answer), Hunter answering in --hunter-latency, buckets off (a plan with
high limits). With --schema it loads its leads (workspace "storm") into
that existing scratch schema and ticks there, beside what else runs in
it; the schema is left to its owner. It runs for --duration, or until SIGTERM/SIGINT (the tick in
flight then gets SIGTERM), drops the schema and prints the provider calls
made, their rate and the local Postgres's CPU per call (the guard's admit
and settle, the ledger, the outcome records and events, and each tick's
own start and finish).

Run it beside an email tick to see what enrichment costs email on a shared
database; "rindactl bench incident" does that as interleaved pairs.`,
		Example: `  rindabench bench storm --duration 20s --output json
  # the same storm ticking another build's enrich tick (before/after)
  rindabench bench storm --duration 20s --tick-binary /tmp/rindactl-main --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return benchStormRun(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Leads, "leads", bench.StormLeadsDefault, "due leads to load (more than the storm can work)")
	fl.IntVar(&opts.Batch, "batch", bench.StormBatchDefault, "the enrich ticks' --batch")
	fl.IntVar(&opts.Concurrency, "concurrency", bench.StormConcurrencyDefault, "the enrich ticks' --concurrency")
	fl.DurationVar(&opts.HunterLatency, "hunter-latency", bench.StormHunterLatencyDefault, "how long the Hunter stand-in takes to answer")
	fl.DurationVar(&opts.Duration, "duration", 0, "stop after this long (default: run until SIGTERM or SIGINT)")
	fl.StringVar(&opts.Schema, "schema", "", "tick in this existing migrated schema (another bench's scratch schema) instead of a new one")
	fl.StringVar(&opts.TickBinary, "tick-binary", "", "the rindactl whose enrich tick the storm runs, e.g. another commit's build for a before/after pair (default: the rindactl beside rindabench)")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func benchStormRun(ctx context.Context, opts *BenchStormOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if err := opts.check(); err != nil {
		return err
	}
	if err := opts.f.awaitQuiet(ctx); err != nil {
		return err
	}
	res, err := bench.Storm(ctx, bench.StormConfig{
		URL: opts.f.DatabaseURL, Leads: opts.Leads, Batch: opts.Batch, Concurrency: opts.Concurrency,
		HunterLatency: opts.HunterLatency, Duration: opts.Duration, Schema: opts.Schema, Binary: opts.TickBinary,
		Running: func() { fmt.Fprintln(opts.f.IO.ErrOut, bench.StormRunning) },
	})
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return opts.f.writeBenchJSON(res)
	}
	fmt.Fprintf(opts.f.IO.Out, "storm:         %d provider calls in %.2fs = %.0f/s over %d enrich ticks\n", res.ProviderCalls, res.Seconds, res.CallsPerSec, res.Ticks)
	fmt.Fprintf(opts.f.IO.Out, "cpu per call:  postgres %s\n", postgresCPU(res.PostgresCPUPerCallUS))
	if res.Drained {
		fmt.Fprintln(opts.f.IO.Out, "the backlog ran out before the end: raise --leads")
	}
	return nil
}

// check is the rule of each of bench storm's flags.
func (opts *BenchStormOptions) check() error {
	switch {
	case opts.Leads < 1:
		return usageError("invalid --leads %d: use 1 or more", opts.Leads)
	case opts.Batch < 1 || opts.Batch > 10000:
		return usageError("invalid --batch %d: use 1 to 10000", opts.Batch)
	case opts.Concurrency < 1 || opts.Concurrency > 1000:
		return usageError("invalid --concurrency %d: use 1 to 1000", opts.Concurrency)
	case opts.HunterLatency < 0 || opts.HunterLatency > time.Minute:
		return usageError("invalid --hunter-latency %s: use 0 to 1m", opts.HunterLatency)
	case opts.Duration < 0:
		return usageError("invalid --duration %s: use a positive duration like 20s", opts.Duration)
	}
	if err := checkTickBinary(&opts.TickBinary); err != nil {
		return err
	}
	return opts.f.CheckDatabaseURL()
}

// checkTickBinary: a --tick-binary given is a program that runs; none
// given is the rindactl beside rindabench (or on PATH).
func checkTickBinary(path *string) error {
	if *path == "" {
		bin, err := rindactlBinary()
		*path = bin
		return err
	}
	if _, err := exec.LookPath(*path); err != nil {
		return usageError("invalid --tick-binary %q: %v (give the path of a built rindactl)", *path, err)
	}
	return nil
}

// BenchIncidentOptions holds the flags of `rindabench bench incident`.
type BenchIncidentOptions struct {
	f         *Factory
	Pairs     int
	Steps     int
	Mailboxes int
	SMTPDelay time.Duration
	Warmup    time.Duration
	Leads     int
	// TickBinary is the storm's --tick-binary.
	TickBinary string
	Output     string
}

func newCmdBenchIncident(f *Factory) *cobra.Command {
	opts := &BenchIncidentOptions{f: f}
	cmd := &cobra.Command{
		Use:   "incident",
		Short: "Replay the incident: email's rate alone and beside an enrichment storm, as interleaved pairs",
		Long: `Replay issue 26's incident as --pairs interleaved pairs. In each pair the
email tick drains --steps due first steps over --mailboxes mailboxes on an
in-process SMTP server that takes --smtp-delay per message (as "rindactl
bench email" does, a fresh scratch schema each run): first alone, then
while "rindactl bench storm" runs beside it as its own process (started
--warmup before the email run). It prints each pair's sends per second and
their ratio, and the median, min and max of the ratios.`,
		Example: `  rindabench bench incident --smtp-delay 20ms --pairs 3
  rindabench bench incident --smtp-delay 0 --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return benchIncidentRun(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Pairs, "pairs", bench.IncidentPairsDefault, "interleaved pairs to run")
	fl.IntVar(&opts.Steps, "steps", bench.IncidentStepsDefault, "due first steps each email run sends")
	fl.IntVar(&opts.Mailboxes, "mailboxes", bench.EmailMailboxesDefault, "mailboxes sending at once")
	fl.DurationVar(&opts.SMTPDelay, "smtp-delay", bench.IncidentSMTPDelayDefault, "time the SMTP server takes to accept each message (0: at once)")
	fl.DurationVar(&opts.Warmup, "warmup", bench.IncidentWarmupDefault, "how long the storm runs before email starts")
	fl.IntVar(&opts.Leads, "leads", bench.StormLeadsDefault, "due leads each storm loads")
	fl.StringVar(&opts.TickBinary, "tick-binary", "", "the rindactl whose enrich tick the storm runs, e.g. another commit's build for a before/after comparison (default: the rindactl beside rindabench)")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// check is the rule of each of bench incident's flags.
func (opts *BenchIncidentOptions) check() error {
	switch {
	case opts.Pairs < 1 || opts.Pairs > 100:
		return usageError("invalid --pairs %d: use 1 to 100", opts.Pairs)
	case opts.Steps < 1:
		return usageError("invalid --steps %d: use 1 or more", opts.Steps)
	case opts.Mailboxes < 1 || opts.Mailboxes > 1000:
		return usageError("invalid --mailboxes %d: use 1 to 1000", opts.Mailboxes)
	case opts.SMTPDelay < 0 || opts.SMTPDelay > time.Minute:
		return usageError("invalid --smtp-delay %s: use 0 to 1m", opts.SMTPDelay)
	case opts.Warmup <= 0:
		return usageError("invalid --warmup %s: use a positive duration like 3s", opts.Warmup)
	case opts.Leads < 1:
		return usageError("invalid --leads %d: use 1 or more", opts.Leads)
	}
	if err := checkTickBinary(&opts.TickBinary); err != nil {
		return err
	}
	return opts.f.CheckDatabaseURL()
}

func benchIncidentRun(ctx context.Context, opts *BenchIncidentOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if err := opts.check(); err != nil {
		return err
	}
	if err := opts.f.awaitQuiet(ctx); err != nil {
		return err
	}
	res, err := bench.Incident(ctx, bench.IncidentConfig{
		URL: opts.f.DatabaseURL, Pairs: opts.Pairs, Steps: opts.Steps, Mailboxes: opts.Mailboxes,
		SMTPDelay: opts.SMTPDelay, Warmup: opts.Warmup, Storm: bench.StormConfig{Leads: opts.Leads, Binary: opts.TickBinary},
	})
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return opts.f.writeBenchJSON(res)
	}
	out := opts.f.IO.Out
	fmt.Fprintf(out, "email, %d steps over %d mailboxes, SMTP %.0f ms per message\n", res.Steps, res.Mailboxes, res.SMTPDelayMS)
	for i, p := range res.Pairs {
		fmt.Fprintf(out, "pair %d:  alone %.0f sends/s, beside the storm %.0f sends/s (storm %.0f calls/s): %.2f\n",
			i+1, p.AloneSendsPerSec, p.StormSendsPerSec, p.StormCallsPerSec, p.Ratio)
		fmt.Fprintf(out, "  ms per send alone:  %s\n", timingLine(p.AloneTiming))
		fmt.Fprintf(out, "  beside the storm:   %s\n", timingLine(p.StormTiming))
		fmt.Fprintf(out, "  cluster added alone:  %s\n", clusterLine(p.AloneClusterAdded))
		fmt.Fprintf(out, "  beside the storm:     %s\n", clusterLine(p.StormClusterAdded))
	}
	fmt.Fprintf(out, "ratio:   median %.2f, min %.2f, max %.2f\n", res.Summary.Median, res.Summary.Min, res.Summary.Max)
	return nil
}

// clusterLine prints what a run added to the counters every run shares.
func clusterLine(c benchstore.ClusterStats) string {
	return fmt.Sprintf("%d checkpoints, %.1f MB WAL, catalog %+.1f MB and %+d dead tuples, %d autovacuum/analyze runs",
		c.Checkpoints, float64(c.WALBytes)/1e6, float64(c.CatalogBytes)/1e6, c.CatalogDeadTuples, c.AutovacuumRuns)
}

// timingLine prints where a message's time went (sequence.TickTiming, per
// send): the mailbox worker's phases, then the statements behind them.
func timingLine(t sequence.TickTiming) string {
	return fmt.Sprintf("worker %.2f = record wait %.2f + smtp %.2f + settle wait %.2f + rest; beside: render %.2f, claim %.2f, record %.2f, settle %.2f",
		t.WorkersMS, t.RecordWaitMS, t.SMTPMS, t.SettleWaitMS, t.RenderMS, t.ClaimMS, t.RecordMS, t.SettleMS)
}
