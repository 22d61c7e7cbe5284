package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/prune"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// PruneOptions holds the flags of `rindactl prune`.
type PruneOptions struct {
	f           *Factory
	Keep        []string
	Batch       int
	MaxDuration time.Duration
	DryRun      bool
	Nice        int
	tickOutputs
}

func newCmdPrune(f *Factory) *cobra.Command {
	opts := &PruneOptions{f: f}
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Delete old history (sends, ledger, events, tick runs) in small batches, exit",
		Long: `Delete the rows of the tables that only grow once they are older than their
table's keep, in batches of --batch rows by key: each batch is one short
statement that skips rows another transaction holds, so no tick ever waits
for prune. Like the other ticks it stops at --max-duration (the next run
carries on), stops on SIGTERM between batches, and records its run in
tick_runs (kind prune). Schedule it hourly ('rindactl schedule print' does).

` + keepTable() + `
Whatever the keep, some rows stay (listed in docs/retention.md): the sends of
enrollments still running, reserved ledger rows, undelivered alerts and
each tick kind's newest runs. A --keep below a table's floor is refused
(exit 2) with what reads those rows. audit_log and enrollments are pruned
only when asked, by a role that may delete them (the schema owner; the
tick role of sql/roles.sql may not).

--dry-run counts what would go, deletes nothing and records no run.`,
		Example: `  rindactl prune --dry-run
  rindactl prune --keep sends=180d --keep tick_runs=7d
  rindactl prune --max-duration 10m --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return pruneRun(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Keep, "keep", nil, "keep TABLE's rows for DURATION (90d, 36h or forever); repeatable")
	fl.IntVar(&opts.Batch, "batch", prune.BatchDefault, "rows looked at per statement")
	fl.DurationVar(&opts.MaxDuration, "max-duration", prune.MaxDurationDefault, "start no batch after this long")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "count what would be deleted; delete nothing")
	fl.IntVar(&opts.Nice, "nice", 10, "raise this run's niceness by N so the other ticks keep their pace (0: leave it)")
	opts.tickOutputs.register(cmd)
	return cmd
}

// keepTable lists each table's default keep and floor for --help.
func keepTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-15s %-9s %s\n", "table", "default", "floor")
	for _, r := range prune.Rules {
		fmt.Fprintf(&b, "  %-15s %-9s %s\n", r.Table, prune.FormatDuration(r.Default), prune.FormatDuration(r.Floor))
	}
	return b.String()
}

func pruneRun(ctx context.Context, opts *PruneOptions) error {
	keeps, err := prune.ParseKeeps(opts.Keep)
	switch {
	case err != nil:
		return usageError("%v", err)
	case opts.Batch < 1 || opts.Batch > 100000:
		return usageError("invalid --batch %d: use 1 to 100000", opts.Batch)
	case opts.MaxDuration <= 0:
		return usageError("invalid --max-duration %s: use a positive duration like 50s", opts.MaxDuration)
	}
	lowerPriority(opts.Nice, opts.f.Logger())
	bounds := tickBounds{Batch: opts.Batch, MaxDuration: opts.MaxDuration}
	return tickRun(ctx, opts.f, tickkind.Prune, bounds, opts.tickOutputs, metrics.NewMetrics(), func(ctx context.Context, pool *pgxpool.Pool) (*prune.TickReport, error) {
		rep, err := prune.RunTick(ctx, pool, prune.TickOptions{Keeps: keeps, Batch: opts.Batch, MaxDuration: opts.MaxDuration, DryRun: opts.DryRun})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" {
			err = fmt.Errorf("%w; audit_log and enrollments are pruned only by a role that may delete them (the schema owner)", err)
		}
		return rep, err
	}, func(rep *prune.TickReport) { printPrune(opts.f.IO, rep) })
}

func printPrune(ios *cliio.IO, rep *prune.TickReport) {
	verb := "deleted"
	if rep.DryRun {
		verb = "would delete"
	}
	t := cliio.Table{Headers: []string{"table", "keep", "older than", verb, "looked at", "done"}, Numeric: []int{3, 4}, Whole: []int{2}}
	for _, tr := range rep.Tables {
		cutoff, done := "-", "yes"
		if tr.Cutoff != nil {
			cutoff = cliio.Stamp(*tr.Cutoff)
		}
		if !tr.Done {
			done = "no"
		}
		if tr.Skipped > 0 {
			done += fmt.Sprintf(" (%s held)", cliio.Thousands(tr.Skipped))
		}
		t.Rows = append(t.Rows, []string{string(tr.Table), tr.Keep, cutoff, cliio.Thousands(tr.Deleted), cliio.Thousands(tr.Scanned), done})
	}
	fmt.Fprintln(ios.Out, cliio.NewPainter(ios.Out, ios.ColorEnabled()).Table(t))
	switch {
	case rep.Stopped:
		fmt.Fprintf(ios.Out, "stopped at --max-duration after %dms: the next run carries on\n", rep.DurationMS)
	case rep.DryRun:
		fmt.Fprintf(ios.Out, "dry run: %s rows would go; nothing was deleted (%dms)\n", cliio.Thousands(rep.Deleted), rep.DurationMS)
	default:
		fmt.Fprintf(ios.Out, "prune %s deleted %s rows in %dms\n", rep.TickID, cliio.Thousands(rep.Deleted), rep.DurationMS)
	}
}
