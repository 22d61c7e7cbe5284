package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/requeue"
)

// RequeueOptions holds the flags and clients of `rindactl requeue`.
type RequeueOptions struct {
	f         *Factory
	Status    string
	Workspace string
	Provider  string
	Campaign  string
	OlderThan string
	Limit     int
	Refind    bool
	BatchSize int
	DryRun    bool
	Yes       bool
	Output    string
}

func newCmdRequeue(f *Factory) *cobra.Command {
	opts := &RequeueOptions{f: f}
	cmd := &cobra.Command{
		Use:   "requeue --status=S",
		Short: "Move blocked or failed rows back to the queue (e.g. after a quota renews)",
		Long: `Move rows a tick gave up on back into the queue, due now:

  unreachable, enrichment_failed   leads go back to pending with attempts,
                                   negative cache and last error cleared;
                                   what providers already answered stays: an
                                   address found (and paid for) but not yet
                                   verified is verified, and no finder that
                                   answered is asked (or paid) again, unless
                                   --refind
  failed                           enrollments go back to active; the failed
                                   send of their current step is cleared so
                                   the step is tried again
  delivery_unknown                 enrollments whose step went out without an
                                   answer (the server may have it; no tick
                                   resends it): check the mailbox's Sent
                                   folder first; requeue sends the step again

Rows move in batches (5,000 per transaction by default) that claim like a
tick (FOR UPDATE SKIP LOCKED), so running ticks never wait on a requeue for
more than one batch. Each run writes one audit-log row (who, filters, count).

Start with --dry-run: it counts the matching rows by workspace and provider
(or campaign) and changes nothing. Without --yes, requeue asks on a
terminal and refuses elsewhere. A filter that matches nothing exits 0.`,
		Example: `  # after a provider's quota renewed and its breaker was reset
  rindactl requeue --status=unreachable --provider=findymail --dry-run
  rindactl requeue --status=unreachable --provider=findymail --yes

  # the verifier's credits renewed: verify the addresses already paid for
  rindactl breaker reset --workspace acme --provider millionverifier
  rindactl requeue --status=unreachable --provider=millionverifier --yes

  # ask every finder again (and pay again), forgetting their earlier answers
  rindactl requeue --status=unreachable --workspace acme --refind --yes

  # retry the sends that failed in one campaign during the last incident
  rindactl requeue --status=failed --campaign=q3-outbound --yes --output json

  # resend steps whose delivery is unknown, once the Sent folder shows they never left
  rindactl requeue --status=delivery_unknown --campaign=q3-outbound --dry-run`,
		Args: exactArgs(0, "none; filters are flags"),
		RunE: func(cmd *cobra.Command, args []string) error { return requeueRun(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Status, "status", "", "status to requeue: "+strings.Join(requeue.ValidStatuses(), ", "))
	fl.StringVar(&opts.Workspace, "workspace", "", "only this workspace (by name)")
	fl.StringVar(&opts.Provider, "provider", "", "only leads whose last provider is this one (lead statuses)")
	fl.StringVar(&opts.Campaign, "campaign", "", "only this campaign (by name; statuses failed and delivery_unknown)")
	fl.StringVar(&opts.OlderThan, "older-than", "", "only rows unchanged for longer than this (e.g. 30m, 12h, 2d)")
	fl.IntVar(&opts.Limit, "limit", 0, "move at most this many rows (0: all)")
	fl.BoolVar(&opts.Refind, "refind", false, "leads: forget what finders already answered (an unverified address, the finders that found nothing), so every finder is asked, and paid, again")
	fl.IntVar(&opts.BatchSize, "batch-size", requeue.BatchSizeDefault, "rows per transaction")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "count what matches, change nothing")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// requeueReport is the --output json document.
type requeueReport struct {
	DryRun    bool            `json:"dry_run"`
	Filter    requeue.Filter  `json:"filter"`
	OlderThan string          `json:"older_than,omitempty"`
	Matched   int64           `json:"matched"`
	WouldMove int64           `json:"would_move"`
	Moved     int64           `json:"moved"`
	Batches   int             `json:"batches"`
	Groups    []requeue.Group `json:"groups"`
	AuditID   int64           `json:"audit_id,omitempty"`
}

func requeueRun(ctx context.Context, opts *RequeueOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	filter, err := opts.filter()
	if err != nil {
		return err
	}
	ios := opts.f.IO

	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	plan, err := requeue.Prepare(ctx, pool, filter)
	var filterErr *requeue.FilterError
	if errors.As(err, &filterErr) {
		return usageError("%v", err)
	}
	if err != nil {
		return err
	}
	rep := requeueReport{DryRun: opts.DryRun, Filter: filter, OlderThan: opts.OlderThan,
		Matched: plan.Matched, WouldMove: plan.WouldMove, Groups: plan.Groups}
	if plan.Matched == 0 || opts.DryRun {
		return printRequeuePlan(ios, format, rep, plan)
	}
	if ok, err := opts.confirmed(plan); !ok || err != nil {
		return err
	}

	runOpts := requeue.Options{BatchSize: opts.BatchSize, Actor: actor(opts.f)}
	if ios.IsStderrTTY() && format != cliio.FormatJSON {
		var done func()
		runOpts.Progress, done = requeueProgress(ios, plan)
		defer done()
	}
	res, err := requeue.Run(ctx, pool, plan, runOpts)
	if err != nil {
		return err
	}
	rep.Moved, rep.Batches, rep.Groups, rep.AuditID = res.Moved, res.Batches, res.Groups, res.AuditID
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	printRequeued(ios, plan, res)
	return nil
}

// filter reads the flags into a requeue filter; a bad value is a usage
// error.
func (opts *RequeueOptions) filter() (requeue.Filter, error) {
	olderThan, err := parseAge(opts.OlderThan)
	if err != nil {
		return requeue.Filter{}, usageError("invalid --older-than %q: use a duration such as 30m, 12h or 2d", opts.OlderThan)
	}
	if opts.BatchSize <= 0 {
		return requeue.Filter{}, usageError("invalid --batch-size %d: use a positive number", opts.BatchSize)
	}
	filter := requeue.Filter{Status: opts.Status, Workspace: opts.Workspace, Provider: opts.Provider,
		Campaign: opts.Campaign, OlderThan: olderThan, Limit: opts.Limit, Refind: opts.Refind}
	if !slices.Contains(requeue.ValidStatuses(), filter.Status) {
		return requeue.Filter{}, usageError("invalid --status %q: use one of %s", filter.Status, strings.Join(requeue.ValidStatuses(), ", "))
	}
	return filter, nil
}

// requeueNoun is what the filter's rows are called.
func requeueNoun(f requeue.Filter) string {
	if f.Leads() {
		return "lead"
	}
	return "enrollment"
}

// printRequeuePlan reports a dry run, or a filter that matches nothing.
func printRequeuePlan(ios *cliio.IO, format cliio.Format, rep requeueReport, plan *requeue.Plan) error {
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	noun, filter := requeueNoun(rep.Filter), rep.Filter
	if plan.Matched == 0 {
		fmt.Fprint(ios.Out, cliio.Wrap(fmt.Sprintf("No %ss match %s: nothing to requeue.\n", noun, filter.Describe())))
		return nil
	}
	fmt.Fprint(ios.Out, cliio.Wrap(fmt.Sprintf("Dry run: %s %s(s) match %s; would requeue %s. Nothing changed.\n",
		cliio.Thousands(plan.Matched), noun, filter.Describe(), cliio.Thousands(plan.WouldMove))))
	writeRequeueGroups(ios, filter, plan.Groups)
	return nil
}

// confirmed is --yes, or the answer to a question on a terminal; elsewhere
// without --yes it is a usage error. false: the operator said no.
func (opts *RequeueOptions) confirmed(plan *requeue.Plan) (bool, error) {
	if opts.Yes {
		return true, nil
	}
	ios, noun, filter := opts.f.IO, requeueNoun(plan.Filter), plan.Filter
	if !ios.CanPrompt() {
		return false, usageError("requeue would move %s %s(s) (%s): pass --yes to confirm when not on a terminal, or --dry-run to look first",
			cliio.Thousands(plan.WouldMove), noun, filter.Describe())
	}
	ok, err := confirm(ios, fmt.Sprintf("Requeue %s %s(s) matching %s? [y/N] ", cliio.Thousands(plan.WouldMove), noun, filter.Describe()))
	if err == nil && !ok {
		fmt.Fprintln(ios.ErrOut, "Requeue cancelled: nothing changed.")
	}
	return ok, err
}

// requeueProgress is a progress bar on stderr for the run, and its end.
func requeueProgress(ios *cliio.IO, plan *requeue.Plan) (func(int64), func()) {
	bar := progressbar.NewOptions64(plan.WouldMove,
		progressbar.OptionSetWriter(ios.ErrOut),
		progressbar.OptionSetDescription("requeue "+requeueNoun(plan.Filter)+"s"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish())
	return func(moved int64) { _ = bar.Set64(min(moved, plan.WouldMove)) }, func() { _ = bar.Finish() }
}

// printRequeued reports a run for people.
func printRequeued(ios *cliio.IO, plan *requeue.Plan, res requeue.Result) {
	noun, filter := requeueNoun(plan.Filter), plan.Filter
	due := string(lead.Pending)
	if !filter.Leads() {
		due = string(enrollment.Active)
	}
	fmt.Fprint(ios.Out, cliio.Wrap(fmt.Sprintf("Requeued %s %s(s) to %s, due now, in %d batch(es) (audit log #%d).\n",
		cliio.Thousands(res.Moved), noun, due, res.Batches, res.AuditID)))
	writeRequeueGroups(ios, filter, res.Groups)
	if res.Moved < plan.WouldMove {
		fmt.Fprint(ios.Out, cliio.Wrap(fmt.Sprintf("%s matching row(s) were held by a running tick or changed meanwhile and were left alone; run the command again to pick them up.\n",
			cliio.Thousands(plan.WouldMove-res.Moved))))
	}
}

func writeRequeueGroups(ios *cliio.IO, f requeue.Filter, groups []requeue.Group) {
	if len(groups) == 0 {
		return
	}
	t := cliio.Table{Headers: []string{"workspace", "campaign", "enrollments"}, Numeric: []int{2}}
	if f.Leads() {
		t.Headers[1], t.Headers[2] = "provider", "leads"
	}
	for _, g := range groups {
		key := g.Campaign
		if f.Leads() {
			key = g.Provider
			if key == "" {
				key = "(no provider)"
			}
		}
		t.Rows = append(t.Rows, []string{g.Workspace, key, cliio.Thousands(g.Count)})
	}
	fmt.Fprintln(ios.Out, cliio.NewPainter(ios.Out, ios.ColorEnabled()).Table(t))
}

// confirm asks question on stderr and reads a yes/no answer from stdin.
func confirm(ios *cliio.IO, question string) (bool, error) {
	fmt.Fprint(ios.ErrOut, question)
	line, err := bufio.NewReader(ios.In).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// actor names who ran a command, for the audit log: $USER, else the OS user.
func actor(f *Factory) string {
	if u := f.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

// parseAge reads a Go duration or a number of days ("2d"); "" is zero.
func parseAge(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("invalid days %q", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return d, nil
}
