package status

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/muesli/termenv"

	"github.com/rindactl/rindactl/internal/lead"
)

// TableOptions control how a report is drawn for people.
type TableOptions struct {
	// Color enables colour (a terminal without NO_COLOR).
	Color bool
	// Overdue draws only the late backlog and its drain estimate.
	Overdue bool
}

// painter draws styled text and tables through one renderer, so colour is
// decided once from TableOptions instead of from the process's stdout.
type painter struct {
	r                 *lipgloss.Renderer
	head, bad, warn   lipgloss.Style
	good, dim, header lipgloss.Style
	cell              lipgloss.Style
}

func newPainter(w io.Writer, color bool) *painter {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return &painter{
		r:      r,
		head:   r.NewStyle().Bold(true),
		bad:    r.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		warn:   r.NewStyle().Foreground(lipgloss.Color("11")),
		good:   r.NewStyle().Foreground(lipgloss.Color("10")),
		dim:    r.NewStyle().Faint(true),
		header: r.NewStyle().Bold(true).Padding(0, 1),
		cell:   r.NewStyle().Padding(0, 1),
	}
}

// table draws rows under headers; numeric columns (by index) align right.
func (p *painter) table(headers []string, rows [][]string, numeric ...int) string {
	right := map[int]bool{}
	for _, c := range numeric {
		right[c] = true
	}
	t := table.New().
		Border(lipgloss.NormalBorder()).
		BorderStyle(p.r.NewStyle()).
		Headers(headers...).
		Rows(rows...).
		StyleFunc(func(row, col int) lipgloss.Style {
			s := p.cell
			if row == table.HeaderRow {
				s = p.header
			}
			if right[col] {
				s = s.Align(lipgloss.Right)
			}
			return s
		})
	return t.Render()
}

// WriteTable draws the report for people.
func WriteTable(w io.Writer, r *Report, opts TableOptions) error {
	p := newPainter(w, opts.Color)
	var b strings.Builder
	if opts.Overdue {
		p.writeOverdue(&b, r)
	} else {
		p.writeFull(&b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (p *painter) section(b *strings.Builder, title string) {
	b.WriteString("\n" + p.head.Render(title) + "\n")
}

func (p *painter) writeFull(b *strings.Builder, r *Report) {
	now := r.GeneratedAt
	fmt.Fprintf(b, "rindactl status at %s\n", stamp(now))

	p.section(b, "ENRICHMENT")
	rows := make([][]string, 0, len(lead.Statuses))
	for _, s := range lead.Statuses {
		rows = append(rows, []string{string(s), Thousands(r.Enrich.ByStatus[s])})
	}
	b.WriteString(p.table([]string{"status", "leads"}, rows, 1) + "\n")
	fmt.Fprintf(b, "due now %s; blocked: breaker open %s, negative cache %s, ceiling %s, rate limited %s\n",
		Thousands(r.Enrich.DueNow), p.alarm(r.Enrich.Blocked.BreakerOpen), p.alarm(r.Enrich.Blocked.NegativeCache),
		p.alarm(r.Enrich.Blocked.Ceiling), p.alarm(r.Enrich.Blocked.RateLimited))

	p.section(b, "EMAIL")
	p.writeOverdueLine(b, r)
	p.writeBlockedLine(b, r.Email.Blocked)
	p.writeDeliveryUnknownLine(b, r)
	b.WriteString(p.mailboxTable(r, false) + "\n")
	b.WriteString(p.campaignTable(r, false) + "\n")

	p.section(b, "BREAKERS")
	if len(r.Breakers) == 0 {
		b.WriteString("none recorded\n")
	} else {
		rows = rows[:0]
		for _, br := range r.Breakers {
			state := br.State
			if BreakerOpen(br.State, br.OpenUntil, now) {
				state = p.bad.Render(state)
			}
			rows = append(rows, []string{br.Workspace, br.Provider, state, optStamp(br.OpenUntil), br.Reason})
		}
		b.WriteString(p.table([]string{"workspace", "provider", "state", "open until", "reason"}, rows) + "\n")
	}

	p.section(b, "TICKS")
	rows = rows[:0]
	for _, kind := range r.SortedKinds() {
		t := r.Ticks[kind]
		last := optAgo(t.LastStartedAt, now)
		if t.Running {
			last += " (running)"
		}
		failure := optAgo(t.LastFailureAt, now)
		if t.LastFailureError != "" {
			failure += ": " + t.LastFailureError
		}
		rows = append(rows, []string{string(kind), last, optAgo(t.LastSuccessAt, now), failure, Thousands(t.Runs24h), Thousands(t.Failures24h)})
	}
	b.WriteString(p.table([]string{"kind", "last start", "last success", "last failure", "runs 24h", "failed 24h"}, rows, 4, 5) + "\n")

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
		if s.Reached {
			used = p.bad.Render("reached")
		}
		rows = append(rows, []string{s.Workspace, usd(s.SpentUSD), ceiling, used})
	}
	b.WriteString(p.table([]string{"workspace", "spent", "ceiling", "used"}, rows, 1, 2, 3) + "\n")
}

func (p *painter) writeOverdue(b *strings.Builder, r *Report) {
	fmt.Fprintf(b, "rindactl status --overdue at %s\n\n", stamp(r.GeneratedAt))
	p.writeOverdueLine(b, r)
	d := r.Email.Drain
	switch d.LimitedBy {
	case "nothing":
		b.WriteString("drain: nothing to drain\n")
	case "unknown":
		b.WriteString(p.warn.Render("drain: unknown (no successful email tick has claimed rows yet)") + "\n")
	default:
		fmt.Fprintf(b, "drain: about %s, limited by %s (%s sendable under today's caps, %d per tick every %s)\n",
			human(time.Duration(*d.EstimatedSeconds)*time.Second), strings.ReplaceAll(d.LimitedBy, "_", " "),
			Thousands(d.SendableNow), d.PerTick, human(time.Duration(d.TickIntervalSeconds)*time.Second))
	}
	p.writeBlockedLine(b, r.Email.Blocked)
	b.WriteString("\n" + p.mailboxTable(r, true) + "\n")
	b.WriteString(p.campaignTable(r, true) + "\n")
}

func (p *painter) writeOverdueLine(b *strings.Builder, r *Report) {
	if r.Email.Overdue == 0 {
		b.WriteString(p.good.Render("overdue 0") + "\n")
		return
	}
	fmt.Fprintf(b, "%s, oldest %s late\n", p.bad.Render("overdue "+Thousands(r.Email.Overdue)),
		human(time.Duration(r.Email.OldestOverdueSeconds)*time.Second))
}

// writeDeliveryUnknownLine shows steps whose delivery is unknown, which
// only an operator can settle; nothing when there are none.
func (p *painter) writeDeliveryUnknownLine(b *strings.Builder, r *Report) {
	if r.Email.DeliveryUnknown == 0 {
		return
	}
	fmt.Fprintf(b, "%s: check the mailboxes' Sent folders, then 'rindactl requeue --status=delivery_unknown' or leave them\n",
		p.bad.Render("delivery unknown "+Thousands(r.Email.DeliveryUnknown)))
}

func (p *painter) writeBlockedLine(b *strings.Builder, bl EmailBlocked) {
	fmt.Fprintf(b, "blocked (not overdue): no email %s, paused mailbox %s, outside window %s, no mailbox %s, paused campaign %s\n",
		Thousands(bl.NoEmail), Thousands(bl.MailboxPaused), Thousands(bl.OutsideWindow), Thousands(bl.NoMailbox), Thousands(bl.CampaignPaused))
}

func (p *painter) mailboxTable(r *Report, lateOnly bool) string {
	rows := [][]string{}
	for _, m := range r.Email.Mailboxes {
		if lateOnly && m.Overdue == 0 {
			continue
		}
		capacity := Thousands(m.Sent24h) + " / "
		if m.CapToday == 0 {
			capacity += "no cap"
		} else {
			capacity += Thousands(int64(m.CapToday))
			if m.RampNextAt != nil {
				capacity += " ramp" // today's cap of a warm-up ramp
			}
			if m.Remaining == 0 {
				capacity = p.warn.Render(capacity)
			}
		}
		paused, why := "-", ""
		if m.Paused(r.GeneratedAt) {
			paused = p.bad.Render(m.Status)
			if m.PausedUntil != nil && m.PausedUntil.After(r.GeneratedAt) {
				paused = p.bad.Render(stamp(*m.PausedUntil))
			}
			why = m.PauseReason
		}
		rows = append(rows, []string{m.Workspace, m.Address, Thousands(m.Overdue), capacity, paused, why})
	}
	if len(rows) == 0 {
		return "no mailboxes with overdue steps"
	}
	return p.table([]string{"workspace", "mailbox", "overdue", "sent 24h / cap", "paused until", "why"}, rows, 2, 3)
}

func (p *painter) campaignTable(r *Report, lateOnly bool) string {
	rows := [][]string{}
	for _, c := range r.Email.Campaigns {
		if lateOnly && c.Overdue == 0 {
			continue
		}
		rows = append(rows, []string{c.Workspace, c.Name, c.Status, Thousands(c.Active), Thousands(c.Overdue),
			human(time.Duration(c.OldestOverdueSeconds) * time.Second), Thousands(c.Blocked.Total())})
	}
	if len(rows) == 0 {
		return "no campaigns with overdue steps"
	}
	return p.table([]string{"workspace", "campaign", "status", "active", "overdue", "oldest", "blocked"}, rows, 3, 4, 5, 6)
}

// alarm renders a blocked count, in red when it is not zero.
func (p *painter) alarm(n int64) string {
	if n == 0 {
		return "0"
	}
	return p.bad.Render(Thousands(n))
}

// Thousands formats 86000 as 86,000.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func usd(v float64) string { return fmt.Sprintf("$%.2f", v) }

// human formats a duration for people: 45s, 12m, 3h05m, 2d4h.
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
