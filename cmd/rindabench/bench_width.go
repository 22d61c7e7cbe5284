package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/bench"
	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// BenchWidthOptions holds the flags of `rindabench bench width`.
type BenchWidthOptions struct {
	f *Factory
	bench.WidthConfig
	Kinds  []string
	Output string
}

func newCmdBenchWidth(f *Factory) *cobra.Command {
	opts := &BenchWidthOptions{f: f}
	cmd := &cobra.Command{
		Use:   "width",
		Short: "Run 1, 2, 4, 8 and 16 tick processes at once: throughput, Postgres CPU per row, lock waits",
		Long: `For each kind (--kinds) and each width (--widths), load a backlog into a fresh
scratch schema and run that many tick processes of rindactl at once for
--window, each starting its next tick as soon as its last ends, as several
hosts' schedulers would. Email sends over --mailboxes mailboxes to an
in-process SMTP server taking --smtp-delay per message; enrichment calls a
Findymail stand-in answering in --provider-latency (its bucket on, at a
rate no width reaches: every call still writes the bucket's row).

Printed per width: rows done per second, Postgres CPU per row, and the
share of the active backends' samples (every 20 ms, pg_stat_activity)
spent waiting for a heavyweight lock, with the lock kinds. After each
width the guarantees are checked: every message the server accepted is
recorded (sent, or delivery_unknown when a process was stopped after the
dot), every provider answer is in the ledger; a breach fails the run.`,
		Example: `  rindabench bench width
  rindabench bench width --kinds email --widths 1,4,16 --window 30s --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return benchWidthRun(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.IntSliceVar(&opts.Widths, "widths", bench.WidthsDefault, "numbers of tick processes to run at once")
	fl.StringSliceVar(&opts.Kinds, "kinds", []string{string(tickkind.Email), string(tickkind.Enrich)}, "tick kinds to measure: email, enrich")
	fl.DurationVar(&opts.Window, "window", bench.WidthWindowDefault, "how long each width runs")
	fl.IntVar(&opts.Mailboxes, "mailboxes", bench.WidthMailboxesDefault, "mailboxes the email backlog is spread over")
	fl.IntVar(&opts.Cap.Daily, "daily-cap", 0, "each mailbox's daily_cap (0: none); a cap makes every claim lock the mailboxes it counts")
	fl.DurationVar(&opts.SMTPDelay, "smtp-delay", bench.WidthSMTPDelayDefault, "time the SMTP server takes per message")
	fl.DurationVar(&opts.ProviderLatency, "provider-latency", bench.WidthProviderLatencyDefault, "time the provider stand-in takes per call")
	fl.IntVar(&opts.Steps, "steps", bench.WidthStepsDefault, "due email steps loaded for each width")
	fl.IntVar(&opts.Leads, "leads", bench.WidthLeadsDefault, "due leads loaded for each width")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func benchWidthRun(ctx context.Context, opts *BenchWidthOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if err := opts.check(); err != nil {
		return err
	}
	if err := opts.f.CheckDatabaseURL(); err != nil {
		return err
	}
	opts.URL = opts.f.DatabaseURL
	if opts.WidthConfig.Binary, err = rindactlBinary(); err != nil {
		return err
	}
	if err := opts.f.awaitQuiet(ctx); err != nil {
		return err
	}
	rows, err := bench.Width(ctx, opts.WidthConfig)
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return opts.f.writeBenchJSON(map[string]any{"widths": rows})
	}
	out := opts.f.IO.Out
	// CPU µs per row: Postgres, the tick processes, the bench (its stand-in).
	t := cliio.Table{Headers: []string{"kind", "processes", "ticks", "rows/s", "µs pg+ticks+bench", "waits", "msgs/conn", "by kind"},
		Numeric: []int{1, 2, 3, 4, 5, 6}, Whole: []int{0}, Flexible: []int{7}}
	for _, r := range rows {
		rate := fmt.Sprintf("%.0f", r.RowsPerSec)
		if r.Drained {
			rate = ">=" + rate
		}
		t.Rows = append(t.Rows, []string{string(r.Kind), fmt.Sprint(r.Processes), fmt.Sprint(r.Ticks), rate, cpuPerRow(r),
			fmt.Sprintf("%.1f%%", 100*r.LockShare), perConnection(r), lockKinds(r.LockWaits)})
	}
	fmt.Fprintln(out, cliio.NewPainter(out, false).Table(t))
	fmt.Fprintf(out, "each width ran %s; email over %d mailboxes at %s per message, enrichment at %s per call\n",
		opts.Window, opts.Mailboxes, opts.SMTPDelay, opts.ProviderLatency)
	return nil
}

// check refuses flags out of range (usage errors) and reads --kinds.
func (opts *BenchWidthOptions) check() error {
	for _, w := range opts.Widths {
		if w < 1 || w > 64 {
			return usageError("invalid --widths entry %d: use 1 to 64", w)
		}
	}
	var err error
	if opts.WidthConfig.Kinds, err = widthKinds(opts.Kinds); err != nil {
		return err
	}
	switch {
	case len(opts.Widths) == 0 || len(opts.Kinds) == 0:
		return usageError("--widths and --kinds need at least one entry each")
	case opts.Window < time.Second:
		return usageError("invalid --window %s: use at least 1s", opts.Window)
	case opts.Mailboxes < 1 || opts.Mailboxes > 10000:
		return usageError("invalid --mailboxes %d: use 1 to 10000", opts.Mailboxes)
	case opts.Cap.Daily < 0:
		return usageError("invalid --daily-cap %d: use 0 (no cap) or more", opts.Cap.Daily)
	case opts.SMTPDelay < 0 || opts.ProviderLatency < 0:
		return usageError("--smtp-delay and --provider-latency must not be negative")
	case opts.Steps < 1 || opts.Leads < 1:
		return usageError("--steps and --leads must be at least 1")
	}
	return nil
}

// widthKinds reads --kinds: the tick kinds bench width runs.
func widthKinds(kinds []string) ([]tickkind.Kind, error) {
	var out []tickkind.Kind
	for _, k := range kinds {
		if k != string(tickkind.Email) && k != string(tickkind.Enrich) {
			return nil, usageError("invalid --kinds entry %q: use email or enrich", k)
		}
		out = append(out, tickkind.Kind(k))
	}
	return out, nil
}

// lockKinds lists lock wait samples by wait event, most first.
func lockKinds(waits map[string]int64) string {
	keys := slices.SortedFunc(maps.Keys(waits), func(a, b string) int { return int(waits[b] - waits[a]) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, waits[k])
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// cpuPerRow is a width row's CPU microseconds per row: Postgres's ("?"
// when not on this machine), the tick processes', the bench's.
func cpuPerRow(r bench.WidthRow) string {
	pg := "?"
	if r.PostgresCPUPerRowUS != nil {
		pg = fmt.Sprintf("%.0f", *r.PostgresCPUPerRowUS)
	}
	return fmt.Sprintf("%s+%.0f+%.0f", pg, r.TicksCPUPerRowUS, r.StandInCPUPerRowUS)
}

// perConnection is the messages sent per SMTP connection ("-" for
// enrichment).
func perConnection(r bench.WidthRow) string {
	if r.SMTPConnections == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(r.Accepted)/float64(r.SMTPConnections))
}
