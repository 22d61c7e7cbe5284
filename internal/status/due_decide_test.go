package status

import (
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
)

// What holds a group of due steps back, in the order status reports the
// blocks; overdue only when nothing but sending capacity does.
func TestDueBlocked(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 5, 20, 0, 0, 0, time.UTC) // a Friday, 20:00 UTC
	mb := int64(7)
	later := now.Add(time.Hour)
	active := &Mailbox{Status: "active"}
	paused := &Mailbox{Status: "active", PausedUntil: &later}
	office := newWindow("lead", []string{"mon", "tue", "wed", "thu", "fri"}, "09:00", "17:00")
	g := func(noEmail bool, mailbox *int64, tz string) store.OpsDueGroup {
		return store.OpsDueGroup{MailboxID: mailbox, NoEmail: noEmail, LeadTimezone: tz, Count: 4}
	}
	cases := []struct {
		name     string
		g        store.OpsDueGroup
		campaign string
		mb       *Mailbox
		w        window
		want     EmailBlocked
		overdue  bool
	}{
		{"campaign paused first", g(true, nil, ""), "paused", paused, office, EmailBlocked{CampaignPaused: 4}, false},
		{"no email", g(true, &mb, ""), "active", paused, office, EmailBlocked{NoEmail: 4}, false},
		{"no mailbox", g(false, nil, ""), "active", nil, window{}, EmailBlocked{NoMailbox: 4}, false},
		{"mailbox paused", g(false, &mb, "UTC"), "active", paused, window{}, EmailBlocked{MailboxPaused: 4}, false},
		{"outside the lead's window", g(false, &mb, "Europe/Paris"), "active", active, office, EmailBlocked{OutsideWindow: 4}, false},
		{"inside the lead's window", g(false, &mb, "America/Los_Angeles"), "active", active, office, EmailBlocked{}, true},
		{"a mailbox the report does not show", g(false, &mb, ""), "active", nil, window{}, EmailBlocked{}, true},
		{"no window", g(false, &mb, ""), "active", active, window{}, EmailBlocked{}, true},
	}
	for _, tc := range cases {
		b, overdue := dueBlocked(tc.g, tc.campaign, tc.mb, tc.w, now)
		if b != tc.want || overdue != tc.overdue {
			t.Errorf("%s: blocked %+v, overdue %v; want %+v, %v", tc.name, b, overdue, tc.want, tc.overdue)
		}
	}
}
