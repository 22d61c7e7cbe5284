package status

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store"
)

// The decisions of `why`, from rows as the store reads them: no database.

var whyNow = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// HoldCodes lists the holds' codes; exported for the external tests too.
func HoldCodes(holds []Hold) string {
	var c []string
	for _, h := range holds {
		c = append(c, h.Code)
	}
	return strings.Join(c, ",")
}

func TestOneLead(t *testing.T) {
	t.Parallel()
	two := []store.OpsLead{{ID: 1, Workspace: "acme"}, {ID: 2, Workspace: "beta"}}
	cases := []struct {
		name      string
		leads     []store.OpsLead
		workspace string
		notFound  bool
		ambiguous bool
		text      string
	}{
		{"one", two[:1], "", false, false, ""},
		{"none", nil, "", true, false, `no lead "crm-1" (give`},
		{"none in a workspace", nil, "acme", true, false, `in workspace "acme"`},
		{"several", two, "", false, true, "id 1 in acme, id 2 in beta"},
	}
	for _, tc := range cases {
		l, err := oneLead(tc.leads, "crm-1", tc.workspace)
		var nf *NotFoundError
		var amb *AmbiguousError
		if errors.As(err, &nf) != tc.notFound || errors.As(err, &amb) != tc.ambiguous {
			t.Errorf("%s: error %v", tc.name, err)
		}
		if err == nil && l.ID != 1 {
			t.Errorf("%s: lead %d, want 1", tc.name, l.ID)
		}
		if tc.text != "" && (err == nil || !strings.Contains(err.Error(), tc.text)) {
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.text)
		}
	}
}

func TestLeadRowHolds(t *testing.T) {
	t.Parallel()
	later, earlier := whyNow.Add(time.Hour), whyNow.Add(-time.Hour)
	cases := []struct {
		name    string
		l       store.OpsLead
		final   string // summary prefix when final
		codes   string
		guarded bool
	}{
		{"imported with an address", store.OpsLead{Email: "a@b.test"}, "this lead never needed", "", false},
		{"no row, no address", store.OpsLead{}, "this lead has no enrichment row", "", false},
		{"enriched", store.OpsLead{HasEnrichment: true, Status: "enriched", Provider: "hunter"}, "enriched: address found by hunter", "", false},
		{"not found", store.OpsLead{HasEnrichment: true, Status: "not_found"}, "not_found:", "", false},
		{"failed ignores guards", store.OpsLead{HasEnrichment: true, Status: "enrichment_failed", Attempts: 5}, "", "failed", false},
		{"leased", store.OpsLead{HasEnrichment: true, Status: "in_progress", LockedBy: "t1", LockedUntil: &later}, "", "lease", true},
		{"negative cache", store.OpsLead{HasEnrichment: true, Status: "unreachable", NegativeCacheUntil: &later}, "", "negative_cache", true},
		{"negative cache over", store.OpsLead{HasEnrichment: true, Status: "unreachable", NegativeCacheUntil: &earlier}, "", "", true},
		{"backing off", store.OpsLead{HasEnrichment: true, Status: "pending", NextAttemptAt: &later}, "", "backoff", true},
		{"due", store.OpsLead{HasEnrichment: true, Status: "pending", NextAttemptAt: &earlier}, "", "", true},
	}
	for _, tc := range cases {
		row := leadRowHolds(tc.l, whyNow)
		if tc.final != "" {
			if !strings.HasPrefix(row.summary, tc.final) || len(row.holds) != 0 {
				t.Errorf("%s: summary %q holds %s, want final %q", tc.name, row.summary, HoldCodes(row.holds), tc.final)
			}
			continue
		}
		if row.summary != "" || HoldCodes(row.holds) != tc.codes || row.guarded != tc.guarded {
			t.Errorf("%s: summary %q holds %q guarded %v, want holds %q guarded %v", tc.name, row.summary, HoldCodes(row.holds), row.guarded, tc.codes, tc.guarded)
		}
	}
	if row := leadRowHolds(store.OpsLead{Email: "a@b.test"}, whyNow); row.status != "none" {
		t.Errorf("a lead without enrichment shows status %q, want none", row.status)
	}
}

func TestEnrollmentHolds(t *testing.T) {
	t.Parallel()
	later, earlier := whyNow.Add(time.Hour), whyNow.Add(-time.Hour)
	mailbox := int64(3)
	live := func(f func(*store.OpsEnrollment)) store.OpsEnrollment {
		e := store.OpsEnrollment{Status: "active", CurrentStep: 1, NextSendAt: earlier, CampaignStatus: "active",
			LeadEmail: "a@b.test", MailboxID: &mailbox, MailboxAddress: "sdr@acme.test", MailboxStatus: "active"}
		f(&e)
		return e
	}
	cases := []struct {
		name  string
		e     store.OpsEnrollment
		codes string
	}{
		{"due", live(func(*store.OpsEnrollment) {}), ""},
		{"failed", live(func(e *store.OpsEnrollment) { e.Status = "failed" }), "failed"},
		{"delivery unknown", live(func(e *store.OpsEnrollment) { e.Status = "delivery_unknown" }), "delivery_unknown"},
		{"campaign paused, not due", live(func(e *store.OpsEnrollment) { e.CampaignStatus = "paused"; e.NextSendAt = later }), "campaign_paused,not_due"},
		{"lease hides the schedule", live(func(e *store.OpsEnrollment) { e.LockedUntil = &later; e.NextSendAt = later }), "lease"},
		{"not due only when active", live(func(e *store.OpsEnrollment) { e.Status = "failed"; e.NextSendAt = later }), "failed"},
		{"no address, suppressed", live(func(e *store.OpsEnrollment) { e.LeadEmail = ""; e.Suppressed = "bounced" }), "no_email,suppressed"},
		{"no mailbox skips the cap", live(func(e *store.OpsEnrollment) { e.MailboxID = nil; e.MailboxCapToday = 1; e.MailboxSent24h = 5 }), "no_mailbox"},
		{"disabled wins over paused", live(func(e *store.OpsEnrollment) { e.MailboxStatus = "disabled"; e.MailboxPausedUntil = &later }), "mailbox_disabled"},
		{"paused", live(func(e *store.OpsEnrollment) { e.MailboxPausedUntil = &later }), "mailbox_paused"},
		{"pause over", live(func(e *store.OpsEnrollment) { e.MailboxPausedUntil = &earlier }), ""},
		{"cap reached, gap", live(func(e *store.OpsEnrollment) { e.MailboxCapToday = 5; e.MailboxSent24h = 5; e.MailboxGapUntil = &later }), "daily_cap_reached,gap"},
		{"cap not reached", live(func(e *store.OpsEnrollment) { e.MailboxCapToday = 5; e.MailboxSent24h = 4 }), ""},
		// 10:00 UTC on a Wednesday is 05:00 in New York.
		{"outside the window", live(func(e *store.OpsEnrollment) {
			e.WindowTimezone, e.WindowDays, e.WindowStart, e.WindowEnd = "America/New_York", []string{"wed"}, "09:00", "17:00"
		}), "outside_window"},
		{"inside the window", live(func(e *store.OpsEnrollment) {
			e.WindowTimezone, e.WindowDays, e.WindowStart, e.WindowEnd = "UTC", []string{"wed"}, "09:00", "17:00"
		}), ""},
		{"last send failed", live(func(e *store.OpsEnrollment) { e.LastSendStatus, e.LastSendError = "failed", "token=abc 451" }), "last_error"},
	}
	for _, tc := range cases {
		holds := enrollmentHolds(tc.e, whyNow)
		if got := HoldCodes(holds); got != tc.codes {
			t.Errorf("%s: holds %q, want %q", tc.name, got, tc.codes)
		}
		for _, h := range holds {
			if strings.Contains(h.Detail, "abc") {
				t.Errorf("%s: hold %s shows a secret: %q", tc.name, h.Code, h.Detail)
			}
		}
	}
}

func TestEnrollmentFinal(t *testing.T) {
	t.Parallel()
	for status, final := range map[enrollment.Status]bool{"completed": true, "bounced": true, "replied": true, "unsubscribed": true,
		"active": false, "failed": false, "delivery_unknown": false} {
		summary, got := enrollmentFinal(store.OpsEnrollment{Status: status, Steps: 3})
		if got != final || (final && !strings.HasPrefix(summary, string(status)+":")) {
			t.Errorf("%s: final %v summary %q, want final %v", status, got, summary, final)
		}
	}
}
