package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/prune"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// pruneTick is the history-pruning tick kind: old rows of the tables that
// only grow, deleted in small batches at a low CPU priority.
func pruneTick() tickCommand {
	var keep []string
	var dryRun bool
	var keeps prune.Keeps
	return &tickSpec[prune.TickReport]{
		kind: tickkind.Prune,
		cmd: &cobra.Command{
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
		},
		bounds: tickBoundSpecs{
			Batch:       &intBound{Default: prune.BatchDefault, Max: 100000, Help: "rows looked at per statement"},
			MaxDuration: durationBound{Default: prune.MaxDurationDefault, Help: "start no batch after this long"},
			Nice:        &niceBound{Default: 10, Help: "raise this run's niceness by N so the other ticks keep their pace (0: leave it)"},
		},
		flags: func(fl *pflag.FlagSet) {
			fl.StringArrayVar(&keep, "keep", nil, "keep TABLE's rows for DURATION (90d, 36h or forever); repeatable")
			fl.BoolVar(&dryRun, "dry-run", false, "count what would be deleted; delete nothing")
		},
		prepare: func(*tickEnv) (err error) {
			keeps, err = prune.ParseKeeps(keep)
			return err
		},
		work: func(ctx context.Context, t *tickEnv) (*prune.TickReport, error) {
			rep, err := prune.RunTick(ctx, t.Pool, prune.TickOptions{Keeps: keeps, Batch: t.Batch, MaxDuration: t.MaxDuration, DryRun: dryRun})
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "42501" {
				err = fmt.Errorf("%w; audit_log and enrollments are pruned only by a role that may delete them (the schema owner)", err)
			}
			return rep, err
		},
		counts: (*prune.TickReport).Counts,
		text:   printPrune,
	}
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
