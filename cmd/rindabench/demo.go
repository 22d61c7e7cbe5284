package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/demo"
)

// DemoOptions holds the flags of `rindabench demo`.
type DemoOptions struct {
	f         *Factory
	Leads     int
	Overdue   int
	Mailboxes int
	Rounds    int
	Keep      bool
	Output    string
}

func newCmdDemo(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{f: f}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Replay the incident end to end on a throwaway Postgres",
		Long: `Replay the incident this tool exists to prevent, scaled down to under a
minute: a lead-enrichment backlog, overdue sequence emails over many
mailboxes, and Findymail running out of credits part-way.

The demo starts a throwaway Postgres (or, when DATABASE_URL is set, creates
a scratch database on that server and drops it afterwards), migrates it,
and starts in-process stand-ins for Hunter, Findymail, MillionVerifier, a
Slack webhook and an SMTP server. It seeds the incident with the real
commands (import leads, import campaign, enroll), then runs "enrich tick"
and "email tick" as separate processes, side by side, for a few rounds.

The report shows emails sent in every round while enrichment is blocked,
the calls made to Findymail after its quota answer (the breaker allows at
most one probe per window), the leads Hunter enriched as the fallback, the
Slack alerts, and how evenly the mailboxes shared the sends. Nothing is
left behind unless --keep is given. Real provider keys, Slack webhooks and
DATABASE_URL credentials are never passed to the ticks it runs.`,
		Example: `  make demo
  rindabench demo --leads 86000 --overdue 30339 --rounds 10
  rindabench demo --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return orTestHook(runF, demoRun)(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Leads, "leads", demo.LeadsDefault, "leads to enrich")
	fl.IntVar(&opts.Overdue, "overdue", demo.OverdueDefault, "overdue sequence steps (enrolled leads that already have an email)")
	fl.IntVar(&opts.Mailboxes, "mailboxes", demo.MailboxesDefault, "sender mailboxes")
	fl.IntVar(&opts.Rounds, "rounds", demo.RoundsDefault, "rounds of enrich tick + email tick")
	fl.BoolVar(&opts.Keep, "keep", false, "keep the work directory (CSV, campaign, tick logs) and a scratch database")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func demoRun(ctx context.Context, opts *DemoOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	// The ticks run as separate processes of the rindactl beside this one.
	bin, err := rindactlBinary()
	if err != nil {
		return err
	}
	ios := opts.f.IO
	cfg := demo.Config{
		Binary: bin, ServerURL: opts.f.DatabaseURL,
		Leads: opts.Leads, Overdue: opts.Overdue, Mailboxes: opts.Mailboxes, Rounds: opts.Rounds,
		Keep: opts.Keep,
		Log:  func(format string, args ...any) { fmt.Fprintf(ios.ErrOut, "demo: "+format+"\n", args...) },
	}
	if err := cfg.Validate(); err != nil {
		return usageError("%v", err)
	}
	if format == cliio.FormatText && ios.IsStdoutTTY() {
		cfg.Status = ios.Out
		if ios.IsStderrTTY() {
			// Progress lines share the terminal with the status line: clear
			// it first so they do not land at its end.
			cfg.Log = func(format string, args ...any) { fmt.Fprintf(ios.ErrOut, "\r\033[Kdemo: "+format+"\n", args...) }
		}
	}
	rep, err := demo.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	rep.Render(ios.Out)
	return nil
}
