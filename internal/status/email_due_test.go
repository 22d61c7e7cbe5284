package status

import (
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
)

// dueBlock, from a group as the store reads it: the first cause wins, and
// only a group no cause holds is overdue.
func TestDueBlock(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC) // a Wednesday
	mbID := int64(7)
	later := now.Add(time.Hour)
	active := &Mailbox{Status: "active"}
	paused := &Mailbox{Status: "active", PausedUntil: &later}
	pauseOver := &Mailbox{Status: "active", PausedUntil: &now}
	disabled := &Mailbox{Status: "disabled"}
	open := newWindow("UTC", []string{"wed"}, "09:00", "17:00")
	shut := newWindow("UTC", []string{"wed"}, "18:00", "20:00")
	cases := []struct {
		name    string
		status  string
		noEmail bool
		mailbox *int64
		mb      *Mailbox
		w       window
		want    EmailBlocked
		overdue bool
	}{
		{name: "overdue", status: "active", mailbox: &mbID, mb: active, w: open, overdue: true},
		{name: "no window", status: "active", mailbox: &mbID, mb: active, overdue: true},
		{name: "campaign paused first", status: "paused", noEmail: true, w: shut, want: EmailBlocked{CampaignPaused: 3}},
		{name: "no address before no mailbox", status: "active", noEmail: true, w: shut, want: EmailBlocked{NoEmail: 3}},
		{name: "no mailbox", status: "active", w: shut, want: EmailBlocked{NoMailbox: 3}},
		{name: "mailbox paused before the window", status: "active", mailbox: &mbID, mb: paused, w: shut, want: EmailBlocked{MailboxPaused: 3}},
		{name: "mailbox disabled", status: "active", mailbox: &mbID, mb: disabled, w: open, want: EmailBlocked{MailboxPaused: 3}},
		{name: "pause over", status: "active", mailbox: &mbID, mb: pauseOver, w: open, overdue: true},
		{name: "mailbox not listed: the window decides", status: "active", mailbox: &mbID, w: shut, want: EmailBlocked{OutsideWindow: 3}},
		{name: "outside the window", status: "active", mailbox: &mbID, mb: active, w: shut, want: EmailBlocked{OutsideWindow: 3}},
	}
	for _, tc := range cases {
		g := store.OpsDueGroup{CampaignID: 1, MailboxID: tc.mailbox, NoEmail: tc.noEmail, Count: 3, Oldest: now.Add(-time.Hour)}
		got, blocked := dueBlock(g, tc.status, tc.mb, tc.w, now)
		if got != tc.want || blocked == tc.overdue {
			t.Errorf("%s: dueBlock = %+v, blocked %v; want %+v, blocked %v", tc.name, got, blocked, tc.want, !tc.overdue)
		}
	}
}

func TestEarliest(t *testing.T) {
	t.Parallel()
	a := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	b := a.Add(time.Minute)
	for _, tc := range []struct{ x, y, want time.Time }{
		{time.Time{}, a, a}, {a, b, a}, {b, a, a}, {a, time.Time{}, time.Time{}},
	} {
		if got := earliest(tc.x, tc.y); !got.Equal(tc.want) {
			t.Errorf("earliest(%s, %s) = %s, want %s", tc.x, tc.y, got, tc.want)
		}
	}
}
