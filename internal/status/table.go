package status

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/lead"
)

// TableOptions control how a report is drawn for people.
type TableOptions struct {
	// Color enables colour (a terminal without NO_COLOR).
	Color bool
	// Overdue draws only the late backlog and its drain estimate.
	Overdue bool
}

// painter draws the report through the shared table style.
type painter struct{ *cliio.Painter }

// WriteTable draws the report for people.
func WriteTable(w io.Writer, r *Report, opts TableOptions) error {
	p := painter{cliio.NewPainter(w, opts.Color)}
	var b strings.Builder
	if opts.Overdue {
		p.writeOverdue(&b, r)
	} else {
		p.writeFull(&b, r)
	}
	_, err := io.WriteString(w, cliio.Wrap(b.String()))
	return err
}

func (p painter) section(b *strings.Builder, title string) {
	b.WriteString("\n" + p.Head.Render(title) + "\n")
}

func (p painter) writeFull(b *strings.Builder, r *Report) {
	now := r.GeneratedAt
	fmt.Fprintf(b, "rindactl status at %s\n", stamp(now))

	p.section(b, "ENRICHMENT")
	rows := make([][]string, 0, len(lead.Statuses))
	for _, s := range lead.Statuses {
		rows = append(rows, []string{string(s), cliio.Thousands(r.Enrich.ByStatus[s])})
	}
	b.WriteString(p.Table(cliio.Table{Headers: []string{"status", "leads"}, Rows: rows, Numeric: []int{1}}) + "\n")
	fmt.Fprintf(b, "due now %s; blocked: breaker open %s, negative cache %s, ceiling %s, rate limited %s\n",
		cliio.Thousands(r.Enrich.DueNow), p.alarm(r.Enrich.Blocked.BreakerOpen), p.alarm(r.Enrich.Blocked.NegativeCache),
		p.alarm(r.Enrich.Blocked.Ceiling), p.alarm(r.Enrich.Blocked.RateLimited))

	p.section(b, "EMAIL")
	p.writeOverdueLine(b, r)
	p.writeBlockedLine(b, r.Email.Blocked)
	p.writeDeliveryUnknownLine(b, r)
	b.WriteString(p.mailboxTable(r, false) + "\n\n")
	b.WriteString(p.campaignTable(r, false) + "\n")

	p.section(b, "BREAKERS")
	if len(r.Breakers) == 0 {
		b.WriteString("none recorded\n")
	} else {
		rows = rows[:0]
		var reasons []string // under the table, uncut
		for _, br := range r.Breakers {
			state := br.State
			if BreakerOpen(br.State, br.OpenUntil, now) {
				state = p.Bad.Render(state)
			}
			rows = append(rows, []string{br.Workspace, br.Provider, state, optStamp(br.OpenUntil)})
			if br.Reason != "" {
				reasons = append(reasons, fmt.Sprintf("%s %s breaker %s: %s\n", br.Workspace, br.Provider, br.State, br.Reason))
			}
		}
		b.WriteString(p.Table(cliio.Table{Headers: []string{"workspace", "provider", "state", "open until"}, Rows: rows, Whole: []int{3}}) + "\n")
		b.WriteString(strings.Join(reasons, ""))
	}

	p.section(b, "TICKS (runs and failures over 24h)")
	rows = rows[:0]
	var failures []string // the errors go under the table, uncut
	for _, kind := range r.SortedKinds() {
		t := r.Ticks[kind]
		last := optAgo(t.LastStartedAt, now)
		if t.Running {
			last += " (running)"
		}
		if t.LastFailureError != "" {
			failures = append(failures, fmt.Sprintf("%s last failed: %s\n", kind, t.LastFailureError))
		}
		rows = append(rows, []string{string(kind), last, optAgo(t.LastSuccessAt, now), optAgo(t.LastFailureAt, now),
			cliio.Thousands(t.Runs24h), cliio.Thousands(t.Failures24h)})
	}
	b.WriteString(p.Table(cliio.Table{Headers: []string{"kind", "last start", "last success", "last failure", "runs", "failed"},
		Rows: rows, Numeric: []int{4, 5}}) + "\n")
	b.WriteString(strings.Join(failures, ""))

	monthStart := MonthStart(now)
	p.section(b, "SPEND since "+monthStart.Format("2006-01-02"))
	rows = rows[:0]
	for _, s := range r.Spend {
		ceiling, used := "none", "-"
		if s.CeilingUSD != nil {
			ceiling = usd(*s.CeilingUSD)
			if *s.CeilingUSD > 0 {
				used = strconv.Itoa(int(s.SpentUSD*100 / *s.CeilingUSD)) + "%"
			}
		}
		switch {
		case s.Reached:
			used = p.Bad.Render("reached")
		case atCeiling(s.SpentUSD, s.CeilingUSD):
			used = p.Warn.Render("in flight")
		}
		rows = append(rows, []string{s.Workspace, usd(s.SpentUSD), ceiling, used})
	}
	b.WriteString(p.Table(cliio.Table{Headers: []string{"workspace", "spent", "ceiling", "used"}, Rows: rows, Numeric: []int{1, 2, 3}}) + "\n")
}

func (p painter) writeOverdue(b *strings.Builder, r *Report) {
	fmt.Fprintf(b, "rindactl status --overdue at %s\n\n", stamp(r.GeneratedAt))
	p.writeOverdueLine(b, r)
	d := r.Email.Drain
	switch d.LimitedBy {
	case "nothing":
		b.WriteString("drain: nothing to drain\n")
	case "unknown":
		b.WriteString(p.Warn.Render("drain: unknown (no successful email tick has claimed rows yet)") + "\n")
	default:
		fmt.Fprintf(b, "drain: about %s, limited by %s (%s sendable under today's caps, %s per tick every %s)\n",
			human(time.Duration(*d.EstimatedSeconds)*time.Second), strings.ReplaceAll(d.LimitedBy, "_", " "),
			cliio.Thousands(d.SendableNow), cliio.Thousands(d.PerTick), human(time.Duration(d.TickIntervalSeconds)*time.Second))
	}
	p.writeBlockedLine(b, r.Email.Blocked)
	b.WriteString("\n" + p.mailboxTable(r, true) + "\n\n")
	b.WriteString(p.campaignTable(r, true) + "\n")
}

func (p painter) writeOverdueLine(b *strings.Builder, r *Report) {
	if r.Email.Overdue == 0 {
		b.WriteString(p.Good.Render("overdue 0") + "\n")
		return
	}
	fmt.Fprintf(b, "%s, oldest %s late\n", p.Bad.Render("overdue "+cliio.Thousands(r.Email.Overdue)),
		lateness(r.Email.Overdue, r.Email.OldestOverdueSeconds))
}

// writeDeliveryUnknownLine shows steps whose delivery is unknown, which
// only an operator can settle; nothing when there are none.
func (p painter) writeDeliveryUnknownLine(b *strings.Builder, r *Report) {
	if r.Email.DeliveryUnknown == 0 {
		return
	}
	fmt.Fprintf(b, "%s: check the mailboxes' Sent folders, then 'rindactl requeue --status=delivery_unknown' or leave them\n",
		p.Bad.Render("delivery unknown "+cliio.Thousands(r.Email.DeliveryUnknown)))
}

func (p painter) writeBlockedLine(b *strings.Builder, bl EmailBlocked) {
	fmt.Fprintf(b, "blocked (not overdue): no email %s, paused mailbox %s, outside window %s, no mailbox %s, paused campaign %s\n",
		cliio.Thousands(bl.NoEmail), cliio.Thousands(bl.MailboxPaused), cliio.Thousands(bl.OutsideWindow), cliio.Thousands(bl.NoMailbox), cliio.Thousands(bl.CampaignPaused))
}

func (p painter) mailboxTable(r *Report, lateOnly bool) string {
	rows := [][]string{}
	var reasons []string // why each is paused, under the table, uncut
	for _, m := range r.Email.Mailboxes {
		if lateOnly && m.Overdue == 0 {
			continue
		}
		capacity := cliio.Thousands(m.Sent24h) + " / "
		if m.CapToday == 0 {
			capacity += "no cap"
		} else {
			capacity += cliio.Thousands(int64(m.CapToday))
			if m.RampNextAt != nil {
				capacity += " ramp" // today's cap of a warm-up ramp
			}
			if m.Remaining == 0 {
				capacity = p.Warn.Render(capacity)
			}
		}
		paused := "-"
		if m.Paused(r.GeneratedAt) {
			paused = p.Bad.Render(m.Status)
			if m.PausedUntil != nil && m.PausedUntil.After(r.GeneratedAt) {
				paused = p.Bad.Render(stamp(*m.PausedUntil))
			}
			if m.PauseReason != "" {
				reasons = append(reasons, fmt.Sprintf("\n%s paused: %s", m.Address, m.PauseReason))
			}
		}
		bounces := "-"
		if m.BounceSends > 0 {
			bounces = strconv.FormatFloat(m.BounceRate*100, 'f', 1, 64) + "%"
		}
		rows = append(rows, []string{m.Workspace, m.Address, cliio.Thousands(m.Overdue), capacity, bounces, paused})
	}
	if len(rows) == 0 {
		return "no mailboxes with overdue steps"
	}
	return p.Table(cliio.Table{Headers: []string{"workspace", "mailbox", "overdue", "sent 24h / cap", "bounces", "paused until"},
		Rows: rows, Numeric: []int{2, 3, 4}, Whole: []int{5}}) + strings.Join(reasons, "")
}

func (p painter) campaignTable(r *Report, lateOnly bool) string {
	rows := [][]string{}
	for _, c := range r.Email.Campaigns {
		if lateOnly && c.Overdue == 0 {
			continue
		}
		rows = append(rows, []string{c.Workspace, c.Name, c.Status, cliio.Thousands(c.Active), cliio.Thousands(c.Overdue),
			lateness(c.Overdue, c.OldestOverdueSeconds), cliio.Thousands(c.Blocked.Total())})
	}
	if len(rows) == 0 {
		return "no campaigns with overdue steps"
	}
	return p.Table(cliio.Table{Headers: []string{"workspace", "campaign", "status", "active", "overdue", "oldest", "blocked"},
		Rows: rows, Numeric: []int{3, 4, 5, 6}})
}

// alarm renders a blocked count, in red when it is not zero.
func (p painter) alarm(n int64) string {
	if n == 0 {
		return "0"
	}
	return p.Bad.Render(cliio.Thousands(n))
}

func usd(v float64) string { return "$" + cliio.Decimal(v, 2) }

// human formats a duration for people: 45s, 12m, 3h05m, 2d4h.
// lateness is how late the oldest of overdue steps is: "-" when none is
// overdue, "0s" for a step that fell due within the last second (human's
// "-" would read as none beside a non-zero overdue count).
func lateness(overdue, seconds int64) string {
	if overdue == 0 {
		return "-"
	}
	if seconds <= 0 {
		return "0s"
	}
	return human(time.Duration(seconds) * time.Second)
}

func human(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	}
}

func optStamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return stamp(*t)
}

func optAgo(t *time.Time, now time.Time) string {
	if t == nil {
		return "never"
	}
	if now.Sub(*t) < time.Second {
		return "just now"
	}
	return human(now.Sub(*t)) + " ago"
}
