package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/bench"
	"github.com/rindactl/rindactl/internal/cliio"
)

// BenchHistoryOptions holds the flags of `rindabench bench history`.
type BenchHistoryOptions struct {
	f *Factory
	bench.HistoryConfig
	Output string
}

func newCmdBenchHistory(f *Factory) *cobra.Command {
	opts := &BenchHistoryOptions{f: f}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Compare the ticks' Postgres CPU per row beside a year of history and in a fresh schema",
		Long: `Seed a year of history into one scratch schema (--sequences enrollments with
four sends each, --calls ledger rows, --events, --tick-runs, in time order)
beside a fresh one, then measure interleaved pairs: in each schema, load a
backlog (--steps due email steps over --mailboxes, --leads due leads), time
'status --overdue' over it, and drain it through the email and enrichment
ticks (every call charged, so it writes the ledger) while reading the
cluster's Postgres CPU. --pairs rounds run with the history as seeded,
then prune runs at its default keeps (then VACUUM ANALYZE, as autovacuum
would follow), then --pairs rounds more. Printed: each round, the prune,
and per phase the median of the per-pair ratios history / fresh (target:
at most 1.10 once pruned) and the slowest status build (target: under 1 s).

The defaults are a short form (minutes); the issue's year is
--sequences 5000000 --calls 10000000 --events 1000000 --tick-runs 2000000
(20M sends; BENCH_HISTORY_LONG=1 make bench).`,
		Example: `  rindabench bench history
  rindabench bench history --sequences 5000000 --calls 10000000 --events 1000000 --tick-runs 2000000 --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return benchHistoryRun(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Sequences, "sequences", bench.HistorySequencesDefault, "history enrollments, four sends each")
	fl.IntVar(&opts.Calls, "calls", bench.HistoryCallsDefault, "history ledger rows (provider_calls)")
	fl.IntVar(&opts.Events, "events", bench.HistoryEventsDefault, "history events")
	fl.IntVar(&opts.TickRuns, "tick-runs", bench.HistoryTickRunsDefault, "history tick_runs rows")
	fl.IntVar(&opts.Steps, "steps", bench.HistoryStepsDefault, "due email steps drained per round and schema")
	fl.IntVar(&opts.Leads, "leads", bench.HistoryLeadsDefault, "due enrichment leads drained per round and schema")
	fl.IntVar(&opts.Mailboxes, "mailboxes", bench.EmailMailboxesDefault, "mailboxes the email drain sends from")
	fl.IntVar(&opts.Pairs, "pairs", bench.HistoryPairsDefault, "interleaved rounds before the prune, and as many after")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func benchHistoryRun(ctx context.Context, opts *BenchHistoryOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	for _, v := range []struct {
		flag string
		n    int
	}{{"sequences", opts.Sequences}, {"calls", opts.Calls}, {"events", opts.Events}, {"tick-runs", opts.TickRuns},
		{"steps", opts.Steps}, {"leads", opts.Leads}, {"pairs", opts.Pairs}} {
		if v.n < 1 || v.n > 100_000_000 {
			return usageError("invalid --%s %d: use 1 to 100000000", v.flag, v.n)
		}
	}
	if opts.Mailboxes < 1 || opts.Mailboxes > 1000 {
		return usageError("invalid --mailboxes %d: use 1 to 1000", opts.Mailboxes)
	}
	if err := opts.f.CheckDatabaseURL(); err != nil {
		return err
	}
	opts.URL = opts.f.DatabaseURL
	if err := opts.f.awaitQuiet(ctx); err != nil {
		return err
	}
	res, err := bench.History(ctx, opts.HistoryConfig)
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return opts.f.writeBenchJSON(res)
	}
	out := opts.f.IO.Out
	n := cliio.Thousands[int]
	fmt.Fprintf(out, "history: %s sequences (%s sends), %s ledger rows, %s events, %s tick runs; seeded in %.1fs\n",
		n(opts.Sequences), n(4*opts.Sequences), n(opts.Calls), n(opts.Events), n(opts.TickRuns), res.SeedSeconds)
	t := cliio.Table{Headers: []string{"round", "phase", "email µs/send", "enrich µs/lead", "status s"}, Numeric: []int{0}}
	for i, r := range res.Rounds {
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), r.Phase,
			fmt.Sprintf("%.0f / %.0f", r.FreshEmailUS, r.HistoryEmailUS), fmt.Sprintf("%.0f / %.0f", r.FreshEnrichUS, r.HistoryEnrichUS),
			fmt.Sprintf("%.3f / %.3f", r.FreshStatusSeconds, r.HistoryStatusSeconds)})
	}
	fmt.Fprintln(out, "Postgres CPU per row and status --overdue build time, fresh / history:")
	fmt.Fprintln(out, cliio.NewPainter(out, false).Table(t))
	p := res.Prune
	fmt.Fprintf(out, "prune: %s rows deleted in %.1fs (Postgres %s per row); VACUUM ANALYZE %.1fs\n",
		cliio.Thousands(p.Deleted), p.Seconds, postgresCPU(p.PostgresCPUPerRowUS), p.VacuumSeconds)
	for _, tc := range p.Tables {
		fmt.Fprintf(out, "  %-16s %12s -> %12s\n", tc.Table, cliio.Thousands(tc.Before), cliio.Thousands(tc.After))
	}
	for _, phase := range []string{"history", "pruned"} {
		e, en := res.Email[phase], res.Enrich[phase]
		fmt.Fprintf(out, "%-8s history/fresh Postgres CPU per row: email median %.2f (%.2f-%.2f), enrich median %.2f (%.2f-%.2f); slowest status --overdue %.3fs\n",
			phase, e.Median, e.Min, e.Max, en.Median, en.Min, en.Max, res.StatusSecondsMaxima[phase])
	}
	fmt.Fprintln(out, "targets: pruned ratios <= 1.10, status --overdue < 1 s")
	return nil
}
