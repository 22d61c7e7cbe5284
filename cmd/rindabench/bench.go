package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/bench"
	"github.com/rindactl/rindactl/internal/cliio"
)

func newCmdBench(f *Factory) *cobra.Command {
	group := groupCommand("bench", "Measure the claim pipeline and email drain on this machine",
		`Benchmarks in a scratch schema of the database DATABASE_URL names: the
enrichment claim pipeline, the email drain, and both beside a year of
history. The schema is created with
the migrations applied, loaded, measured and dropped; nothing else in the
database is touched. "make bench" runs both on a throwaway cluster as
interleaved pairs with their raw-SQL floors (scripts/bench-floor.sh,
scripts/bench-email-floor.sh) and River (bench/); docs/benchmarks.md has
figures.

A figure counts only from a quiet machine: each bench waits up to
--quiet-wait for the 1-minute load average to fall under --max-load (1.5)
and refuses to start otherwise, and reports the load before and after
its run (stderr, and "machine" in --output json); a run started at 1.5 or
more is marked void.`,
		newCmdBenchClaim(f), newCmdBenchEmail(f), newCmdBenchHistory(f), newCmdBenchWidth(f),
		newCmdBenchStorm(f), newCmdBenchIncident(f))
	addLoadFlags(group, f)
	return group
}

// BenchClaimOptions holds the flags of `rindabench bench claim`.
type BenchClaimOptions struct {
	f           *Factory
	Rows        int
	Batch       int
	Concurrency int
	Output      string
}

func newCmdBenchClaim(f *Factory) *cobra.Command {
	opts := &BenchClaimOptions{f: f}
	cmd := &cobra.Command{
		Use:   "claim --rows N",
		Short: "Time claim -> no-op provider -> record over N due leads",
		Long: `Load N due leads into a scratch schema and time the enrichment tick's
whole pipeline over them until the queue is empty: the claim (FOR UPDATE
SKIP LOCKED with a lease), a provider that answers "not found" at once,
and the grouped outcome records, through the tick's own code. Also
printed: CPU per row of this process and of the local postgres processes
(compare with scripts/bench-floor.sh, the same claim in raw SQL).`,
		Example: `  rindabench bench claim --rows 200000 --output json`,
		Args:    exactArgs(0, "none"),
		RunE:    func(cmd *cobra.Command, args []string) error { return benchClaimRun(cmd.Context(), opts) },
	}
	cmd.Flags().IntVar(&opts.Rows, "rows", 0, "due leads to load and drain (required)")
	cmd.Flags().IntVar(&opts.Batch, "batch", bench.ClaimBatchDefault, "leads per claim")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", bench.ClaimConcurrencyDefault, "leads worked at once")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func benchClaimRun(ctx context.Context, opts *BenchClaimOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	switch {
	case opts.Rows < 1:
		return usageError("--rows is required: the number of due leads to drain, e.g. --rows 200000")
	case opts.Batch < 1 || opts.Batch > 10000:
		return usageError("invalid --batch %d: use 1 to 10000", opts.Batch)
	case opts.Concurrency < 1 || opts.Concurrency > 1000:
		return usageError("invalid --concurrency %d: use 1 to 1000", opts.Concurrency)
	case opts.f.CheckDatabaseURL() != nil:
		return opts.f.CheckDatabaseURL()
	}
	if err := opts.f.awaitQuiet(ctx); err != nil {
		return err
	}
	res, err := bench.Claim(ctx, bench.ClaimConfig{URL: opts.f.DatabaseURL, Rows: opts.Rows, Batch: opts.Batch, Concurrency: opts.Concurrency})
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return opts.f.writeBenchJSON(res)
	}
	fmt.Fprintf(opts.f.IO.Out, "claim pipeline: %d rows in %.2fs = %.0f rows/s (batch %d, concurrency %d)\n",
		res.Rows, res.Seconds, res.RowsPerSec, opts.Batch, opts.Concurrency)
	fmt.Fprintf(opts.f.IO.Out, "cpu per row:    rindactl %.0f µs + postgres %s\n", res.CPUPerRowUS, postgresCPU(res.PostgresCPUPerRowUS))
	return nil
}

// postgresCPU prints a measured postgres CPU figure in microseconds.
func postgresCPU(us *float64) string {
	if us == nil {
		return "unknown (the server is not on this machine)"
	}
	return fmt.Sprintf("%.0f µs", *us)
}

// BenchEmailOptions holds the flags of `rindabench bench email`.
type BenchEmailOptions struct {
	f         *Factory
	Steps     int
	Mailboxes int
	SMTPDelay time.Duration
	Output    string
}

func newCmdBenchEmail(f *Factory) *cobra.Command {
	opts := &BenchEmailOptions{f: f}
	cmd := &cobra.Command{
		Use:   "email --steps N --mailboxes M",
		Short: "Time sending N steps into an in-process SMTP server, against a bare go-mail loop",
		Long: `Enroll N leads in a one-step campaign over M mailboxes on an in-process
SMTP server (loopback, no TLS), time email ticks until every step is sent,
then time a bare go-mail loop sending the same messages to the same server
(one connection per mailbox, no database), and print both and their ratio.

Also printed: CPU per message of this process during each run and of the
local postgres processes during the tick. With --smtp-delay the server takes
that long to accept each message, as a real provider does; the default 0
answers at once, so the database's CPU is all the difference.`,
		Example: `  rindabench bench email --steps 30339 --mailboxes 18 --output json
  rindabench bench email --smtp-delay 5ms`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return benchEmailRun(cmd.Context(), opts) },
	}
	cmd.Flags().IntVar(&opts.Steps, "steps", bench.EmailStepsDefault, "due step-1 enrollments to send")
	cmd.Flags().IntVar(&opts.Mailboxes, "mailboxes", bench.EmailMailboxesDefault, "mailboxes sending at once")
	cmd.Flags().DurationVar(&opts.SMTPDelay, "smtp-delay", 0, "time the SMTP server takes to accept each message, in both runs (e.g. 5ms)")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func benchEmailRun(ctx context.Context, opts *BenchEmailOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	switch {
	case opts.Steps < 1:
		return usageError("invalid --steps %d: use 1 or more", opts.Steps)
	case opts.Mailboxes < 1 || opts.Mailboxes > 1000:
		return usageError("invalid --mailboxes %d: use 1 to 1000", opts.Mailboxes)
	case opts.SMTPDelay < 0 || opts.SMTPDelay > time.Minute:
		return usageError("invalid --smtp-delay %s: use 0 to 1m", opts.SMTPDelay)
	case opts.f.CheckDatabaseURL() != nil:
		return opts.f.CheckDatabaseURL()
	}
	if err := opts.f.awaitQuiet(ctx); err != nil {
		return err
	}
	res, err := bench.Email(ctx, bench.EmailConfig{URL: opts.f.DatabaseURL, Steps: opts.Steps, Mailboxes: opts.Mailboxes, SMTPDelay: opts.SMTPDelay})
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return opts.f.writeBenchJSON(res)
	}
	fmt.Fprintf(opts.f.IO.Out, "email tick:    %d sends in %.2fs = %.0f/s over %d mailboxes\n", res.Steps, res.Seconds, res.SendsPerSec, res.Mailboxes)
	fmt.Fprintf(opts.f.IO.Out, "bare go-mail:  %d sends in %.2fs = %.0f/s\n", res.Steps, res.BareSeconds, res.BareSendsPerSec)
	fmt.Fprintf(opts.f.IO.Out, "ratio:         %.2f\n", res.Ratio)
	if res.SMTPDelayMS > 0 {
		fmt.Fprintf(opts.f.IO.Out, "smtp delay:    %.1f ms per message\n", res.SMTPDelayMS)
	}
	fmt.Fprintf(opts.f.IO.Out, "cpu per send:  tick %.0f µs + postgres %s; bare loop %.0f µs\n",
		res.TickCPUPerSendUS, postgresCPU(res.PostgresCPUPerSendUS), res.BareCPUPerSendUS)
	return nil
}
