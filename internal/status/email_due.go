package status

import (
	"time"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
)

// The decisions of the email report, apart from emailFrom's bookkeeping
// and tested as a table (email_due_test.go).

// mailboxFrom is a mailbox's line of the report, its overdue count still 0.
func mailboxFrom(m store.OpsMailbox) Mailbox {
	mb := Mailbox{Workspace: m.Workspace, Address: m.Address, Status: m.Status, Sent24h: m.Sent24h, DailyCap: m.DailyCap,
		CapToday: m.CapToday, RampNextAt: utc(m.RampNextAt), Remaining: -1, PausedUntil: utc(m.PausedUntil), PauseReason: redact.String(m.PauseReason),
		Bounces: m.RecentBounces, BounceSends: m.RecentSends}
	if m.RecentSends > 0 {
		mb.BounceRate = float64(m.RecentBounces) / float64(m.RecentSends)
	}
	if m.CapToday > 0 {
		mb.Remaining = max(int64(m.CapToday)-m.Sent24h, 0)
	}
	return mb
}

// dueBlock says why a group of due steps cannot go now, the first cause
// in the order an operator would fix them: its campaign is not active, the
// leads have no address, no mailbox is bound, the mailbox is paused (mb:
// nil when the report does not list it), the sending window is shut.
// blocked is false when the group is overdue.
func dueBlock(g store.OpsDueGroup, campaignStatus string, mb *Mailbox, w window, now time.Time) (b EmailBlocked, blocked bool) {
	switch {
	case campaignStatus != "active":
		b.CampaignPaused = g.Count
	case g.NoEmail:
		b.NoEmail = g.Count
	case g.MailboxID == nil:
		b.NoMailbox = g.Count
	case mb != nil && mb.Paused(now):
		b.MailboxPaused = g.Count
	case !w.open(now, g.LeadTimezone):
		b.OutsideWindow = g.Count
	default:
		return b, false
	}
	return b, true
}

// earliest is the earlier of two times; a zero first one counts as none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}
