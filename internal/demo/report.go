package demo

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store/benchstore"
)

// Report is what `rindactl demo` prints (`--output json` prints it as is).
type Report struct {
	Database  string  `json:"database"`
	Leads     int     `json:"leads"`
	Overdue   int     `json:"overdue"`
	Mailboxes int     `json:"mailboxes"`
	Rounds    []Round `json:"rounds"`

	// EmailsSent is the incident's messages sent, as the database holds
	// them at the end; EmailsSentInRounds those sent by the rounds' email
	// ticks (the rest went out with the second act's email tick).
	EmailsSent         int `json:"emails_sent"`
	EmailsSentInRounds int `json:"emails_sent_in_rounds"`
	// Findymail's story: how many calls its credits covered, how many calls
	// were already in flight when its first quota answer came back (they
	// had left before anyone knew), and how many were made after it: the
	// breaker's count, at most one probe per breaker window.
	Findymail FindymailCalls `json:"findymail"`
	// Enrichment: leads by state, and where the enriched ones' addresses
	// came from.
	LeadsByStatus map[string]int `json:"leads_by_status"`
	EnrichedBy    map[string]int `json:"enriched_by"`
	// Alerts are the Slack messages posted (their fallback text).
	Alerts []string `json:"alerts"`
	// Spread is the sent messages per mailbox.
	Spread MailboxSpread `json:"mailbox_spread"`
	// Inbox is the second act: a warm-up ramp, replies and bounces.
	Inbox      InboxAct `json:"inbox"`
	DurationMS int64    `json:"duration_ms"`
}

// FindymailCalls counts calls to the provider that ran out of credits.
type FindymailCalls struct {
	Total     int  `json:"total"`
	Credits   int  `json:"credits"`
	Exhausted bool `json:"exhausted"`
	// InFlight calls had left before the first quota answer came back.
	InFlight int `json:"in_flight_at_quota"`
	// BeforeBreaker calls started after the first quota answer but before
	// the breaker opened: the time ticks took to learn it and record it.
	BeforeBreaker int `json:"after_quota_before_breaker"`
	// AfterBreaker calls started while the breaker was open: the breaker's
	// count, at most one half-open probe per window.
	AfterBreaker int `json:"after_breaker_opened"`
	// BreakerWindows is how many breaker windows the demo spanned after
	// the breaker opened.
	BreakerWindows int `json:"breaker_windows"`
	// AdmittedNotStarted calls were admitted before the breaker opened
	// but had not reached the provider by then: on a starved machine they
	// start after it, so AfterBreaker counts them too.
	AdmittedNotStarted int `json:"admitted_before_breaker_not_started"`
}

// MailboxSpread is the distribution of sent messages over mailboxes.
type MailboxSpread struct {
	Min int     `json:"min"`
	Max int     `json:"max"`
	CV  float64 `json:"cv"`
	// ByMailbox is every mailbox's count.
	ByMailbox map[string]int `json:"by_mailbox"`
}

// collect reads the final state from the database and the stand-ins.
func collect(ctx context.Context, pool *pgxpool.Pool, s *standIns, findymailCredits int, end time.Time) (Report, error) {
	rep := Report{LeadsByStatus: map[string]int{}, EnrichedBy: map[string]int{}}
	enrichment, err := benchstore.DemoEnrichmentResults(ctx, pool)
	if err != nil {
		return rep, err
	}
	for _, r := range enrichment {
		rep.LeadsByStatus[r.Status] += int(r.Leads)
		if r.Source != "" {
			rep.EnrichedBy[r.Source] += int(r.Leads)
		}
	}

	if rep.Spread.ByMailbox, err = benchstore.DemoSentByMailbox(ctx, pool, workspaceName); err != nil {
		return rep, fmt.Errorf("reading sends per mailbox: %w", err)
	}
	for _, n := range rep.Spread.ByMailbox {
		rep.EmailsSent += n
	}
	rep.Spread.Min, rep.Spread.Max, rep.Spread.CV = spread(rep.Spread.ByMailbox)

	// Zero when the breaker never opened.
	breakerOpened, err := benchstore.DemoBreakerOpened(ctx, pool)
	if err != nil {
		return rep, fmt.Errorf("reading when the breaker opened: %w", err)
	}
	rep.Findymail = FindymailCalls{Total: s.findymail.count(), Credits: findymailCredits}
	if q, ok := s.findymail.quota(breakerOpened); ok {
		rep.Findymail.Exhausted = true
		rep.Findymail.InFlight, rep.Findymail.BeforeBreaker, rep.Findymail.AfterBreaker = q.InFlight, q.BeforeBreaker, q.AfterBreaker
		if !breakerOpened.IsZero() {
			rep.Findymail.BreakerWindows = 1 + int(end.Sub(breakerOpened)/guard.QuotaOpenDefault)
			admitted, err := benchstore.DemoAdmittedBy(ctx, pool, breakerOpened)
			if err != nil {
				return rep, fmt.Errorf("reading the calls admitted before the breaker opened: %w", err)
			}
			// The calls the stand-in saw start by then: all but those after.
			rep.Findymail.AdmittedNotStarted = max(0, admitted-(rep.Findymail.Total-q.AfterBreaker))
		}
	}
	rep.Alerts = s.slack.Posts()
	return rep, nil
}

// spread is the minimum, maximum and coefficient of variation of counts.
func spread(counts map[string]int) (lo, hi int, cv float64) {
	if len(counts) == 0 {
		return 0, 0, 0
	}
	lo, sum := math.MaxInt, 0
	for _, n := range counts {
		lo, hi, sum = min(lo, n), max(hi, n), sum+n
	}
	mean := float64(sum) / float64(len(counts))
	if mean == 0 {
		return lo, hi, 0
	}
	var ss float64
	for _, n := range counts {
		ss += (float64(n) - mean) * (float64(n) - mean)
	}
	return lo, hi, math.Sqrt(ss/float64(len(counts))) / mean
}

// Render writes the report for a person.
func (r Report) Render(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("Incident replay: %d leads to enrich, %d overdue sequence steps, %d mailboxes (%s)",
		r.Leads, r.Overdue, r.Mailboxes, r.Database)
	p("")
	p("round  emails sent  enrich: claimed enriched pending unreachable  findymail hunter  findymail")
	for _, rd := range r.Rounds {
		state := "ok"
		if rd.FindymailExhausted {
			state = "out of credits"
		}
		o := rd.Enrich.Outcomes
		p("%5d  %11d  %15d %8d %7d %11d  %9d %6d  %s", rd.N, rd.EmailsSent, rd.Enrich.Claimed,
			o.Enriched, o.Pending, o.Unreachable, rd.Enrich.ProviderCalls["findymail"], rd.Enrich.ProviderCalls["hunter"], state)
	}
	p("")
	p("Email kept its pace: %d sent in %d rounds, in separate processes from enrichment.", r.EmailsSentInRounds, len(r.Rounds))
	if more := r.EmailsSent - r.EmailsSentInRounds; more > 0 {
		p("  The second act's email tick sent %d more of the incident's due steps: %d in all.", more, r.EmailsSent)
	}
	f := r.Findymail
	if f.Exhausted {
		p("Findymail ran out of credits after %d calls. Calls made while its breaker was open: %d (breaker windows: %d; at most one probe each).",
			f.Credits, f.AfterBreaker, f.BreakerWindows)
		p("  Around the quota answer: %d calls already in flight, %d started before the breaker opened.", f.InFlight, f.BeforeBreaker)
		if f.AdmittedNotStarted > 0 {
			p("  %d call(s) admitted before the breaker opened reached Findymail only after it (a busy machine).", f.AdmittedNotStarted)
		}
	} else {
		p("Findymail did not run out of credits (%d calls of %d); give --leads a larger number.", f.Total, f.Credits)
	}
	p("Enriched through the fallback provider (Hunter): %d; through Findymail: %d.", r.EnrichedBy["hunter"], r.EnrichedBy["findymail"])
	p("Leads by state: %s.", cliio.Counts(r.LeadsByStatus, " ", ", "))
	p("Unreachable: %d (Hunter found nothing and Findymail could not be asked: they wait out the negative cache, then retry by themselves).",
		r.LeadsByStatus[string(lead.Unreachable)])
	p("enrichment_failed: %d (the memo's loop turned every quota answer into one, and re-enqueued it).", r.LeadsByStatus[string(lead.EnrichmentFailed)])
	p("Slack alerts posted: %d", len(r.Alerts))
	for _, a := range r.Alerts {
		p("  - %s", firstLine(a))
	}
	p("Per-mailbox spread: min %d, max %d, CV %.1f%% over %d mailboxes.", r.Spread.Min, r.Spread.Max, 100*r.Spread.CV, len(r.Spread.ByMailbox))
	p("")
	in := r.Inbox
	p("Second act: a new mailbox warming up, and the inbox.")
	p("  Warm-up ramp: %s sent %d of its %d due first steps (cap today %d, growing daily); %s sent %d.",
		freshMailbox, in.RampSent, in.RampDue, in.RampCapToday, seasonedMailbox, in.SeasonedSent)
	p("  inbox tick read %s over IMAP: %s.", seasonedMailbox, cliio.Counts(in.Outcomes, " ", ", "))
	p("  %s replied (Gmail): sequence %s. %s bounced (Postfix, 5.1.1): sequence %s, address suppressed: %v.",
		in.ReplyLead, in.ReplyStatus, in.BounceLead, in.BounceStatus, in.Suppressed)
	p("Finished in %.1fs.", float64(r.DurationMS)/1000)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
