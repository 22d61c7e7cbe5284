package invariants

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// brokenBase is a small world that keeps every invariant: one mailbox at
// a cap of 2, a window 09:00-17:00 UTC every day, three leads enrolled,
// lead 1's step 1 sent (and delivered) at 10:00 on a day of the window.
const brokenCampaign = `workspace: acme
name: c1
window: {timezone: UTC, days: [mon, tue, wed, thu, fri, sat, sun], start: "09:00", end: "17:00"}
mailboxes:
  - address: sdr01@acme.test
    smtp_url: smtp://127.0.0.1:2525
    daily_cap: 2
steps:
  - subject: "[c1] Hi"
    body: "Hello"
  - delay: 1h
    body: "Following up"
`

// brokenFixture seeds brokenBase, then corrupts it with sql (run as the
// owner), and reads the evidence as the harness does after a run, with
// deliveries as the fake SMTP server would have logged them.
func brokenFixture(t *testing.T, sql string, deliveries ...delivery) *evidence {
	t.Helper()
	ctx := context.Background()
	db := storetest.New(t)
	c, err := sequence.ParseCampaign(strings.NewReader(brokenCampaign))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sequence.ImportCampaign(ctx, db.Pool, c); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE workspaces SET monthly_usd_ceiling = 0.30`,
		`INSERT INTO leads (workspace_id, external_id, first_name, email, timezone)
			SELECT w.id, 'l' || g, 'F' || g, 'lead' || g || '@example.test', 'UTC' FROM workspaces w, generate_series(1, 3) g`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := sequence.Enroll(ctx, db.Pool, sequence.EnrollRequest{Workspace: "acme", Campaign: "c1"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, sent_at)
			SELECT e.id, 1, e.mailbox_id, 'm1@acme.test', 'sent', now() FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = 'lead1@example.test'`,
		`UPDATE enrollments e SET current_step = 2 FROM leads l WHERE l.id = e.lead_id AND l.email = 'lead1@example.test'`,
		`INSERT INTO workspace_spend (workspace_id, month, spent_usd) SELECT id, date_trunc('month', now())::date, 0.20 FROM workspaces`,
		`INSERT INTO provider_calls (workspace_id, lead_id, provider, state, cost_usd, outcome)
			SELECT w.id, l.id, 'hunter', 'settled', 0.20, 'found' FROM workspaces w JOIN leads l ON l.workspace_id = w.id WHERE l.email = 'lead2@example.test'`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if sql != "" {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("corrupting: %s: %v", sql, err)
		}
	}
	ev := &evidence{caps: []capObservation{{at: day.Add(24 * time.Hour), caps: map[string]int{"sdr01@acme.test": 2}}}}
	if err := ev.read(ctx, db.Pool, &clock{}); err != nil {
		t.Fatal(err)
	}
	ev.deliveries = append([]delivery{sent(10*time.Hour, "lead1@example.test", "m1@acme.test", 1)}, deliveries...)
	return ev
}

// day is a day the stand-in deliveries happen on.
var day = time.Date(2026, 6, 3, 0, 0, 0, 0, time.UTC)

// sent is a delivery logged at day+at, by both clocks.
func sent(at time.Duration, to, messageID string, step int) delivery {
	t := day.Add(at)
	return delivery{Started: t, StartedWall: t, At: t, From: "sdr01@acme.test", To: to, MessageID: messageID, Step: step, Answered: true}
}

// recordSend is SQL giving a delivered message its sends row.
func recordSend(email, messageID string, step int, status string) string {
	return `INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, sent_at)
		SELECT e.id, ` + itoa(step) + `, e.mailbox_id, '` + messageID + `', '` + status + `', now()
		FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = '` + email + `'`
}

func itoa(n int) string { return string(rune('0' + n)) }

// Each invariant's check fails on a world that breaks it (a corrupted
// database, or a server log a broken build would leave), and none fails on
// the world that keeps them all.
func TestChecksFailOnBrokenWorlds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		check      func(*evidence) []string
		sql        string
		deliveries []delivery
	}{
		{"cap: a third message in 24 hours at a cap of 2", checkCaps,
			recordSend("lead2@example.test", "m2@acme.test", 1, "sent") + ";" + recordSend("lead3@example.test", "m3@acme.test", 1, "sent"),
			[]delivery{sent(11*time.Hour, "lead2@example.test", "m2@acme.test", 1), sent(12*time.Hour, "lead3@example.test", "m3@acme.test", 1)}},
		{"window: a message at 20:00 in a 09:00-17:00 window", checkWindows,
			recordSend("lead2@example.test", "m2@acme.test", 1, "sent"),
			[]delivery{sent(20*time.Hour, "lead2@example.test", "m2@acme.test", 1)}},
		{"once: step 1 delivered twice", checkOnce, "",
			[]delivery{sent(11*time.Hour, "lead1@example.test", "m1b@acme.test", 1)}},
		{"stops: mailed after an unsubscribe", checkStops,
			`INSERT INTO suppressions (workspace_id, email, reason) SELECT id, 'lead1@example.test', 'unsubscribed' FROM workspaces;
			 UPDATE suppressions SET created_at = '2026-06-03 10:30:00+00'`,
			[]delivery{sent(11*time.Hour, "lead1@example.test", "m1s2@acme.test", 2)}},
		{"stops: a follow-up after the reply", checkStops,
			recordSend("lead1@example.test", "m1s2@acme.test", 2, "sent") + `;
			 UPDATE enrollments e SET status = 'replied', updated_at = '2026-06-03 10:30:00+00' FROM leads l WHERE l.id = e.lead_id AND l.email = 'lead1@example.test'`,
			[]delivery{sent(11*time.Hour, "lead1@example.test", "m1s2@acme.test", 2)}},
		{"recorded: a send left 'sending'", checkRecorded, recordSend("lead2@example.test", "m2@acme.test", 1, "sending"), nil},
		{"recorded: an enrollment still leased", checkRecorded,
			`UPDATE enrollments SET locked_until = now() + interval '1 hour', locked_by = 'tick' WHERE id = (SELECT min(id) FROM enrollments)`, nil},
		{"recorded: the server has a message no sends row has", checkRecorded, "",
			[]delivery{sent(11*time.Hour, "lead2@example.test", "lost@acme.test", 1)}},
		{"recorded: the server has a message recorded failed", checkRecorded, recordSend("lead2@example.test", "m2@acme.test", 1, "failed"),
			[]delivery{sent(11*time.Hour, "lead2@example.test", "m2@acme.test", 1)}},
		{"spend: above the ceiling", checkSpend, `UPDATE workspace_spend SET spent_usd = 0.50`, nil},
		{"spend: calls costing more than the ceiling", checkSpend, `UPDATE provider_calls SET cost_usd = 0.45`, nil},
		{"enrichment: a lead parked while a provider could serve it", checkParkedWhileServable,
			`INSERT INTO lead_enrichment (lead_id, workspace_id, status, negative_cache_until, provider)
			 SELECT l.id, l.workspace_id, 'unreachable', now() + interval '1 day', 'findymail' FROM leads l WHERE l.email = 'lead3@example.test'`, nil},
		{"enrichment: a find paid twice", checkPaidFindTwice,
			`INSERT INTO provider_calls (workspace_id, lead_id, provider, state, cost_usd, outcome) SELECT workspace_id, lead_id, provider, state, 0.01, outcome FROM provider_calls`, nil},
		{"enrichment: a find bought again after a call whose answer was lost", checkPaidFindTwice,
			`INSERT INTO provider_calls (workspace_id, lead_id, provider, state, cost_usd, outcome) SELECT workspace_id, lead_id, provider, 'reserved', 0.01, NULL FROM provider_calls`, nil},
		{"enrichment: a finder in doubt asked again, and missing", checkPaidFindTwice,
			`INSERT INTO provider_calls (workspace_id, lead_id, provider, state, cost_usd, outcome)
			 SELECT l.workspace_id, l.id, 'findymail', 'settled', 0.01, o FROM leads l, unnest(ARRAY['in_doubt', 'not_found']) o
			 WHERE l.email = 'lead3@example.test'`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev := brokenFixture(t, tc.sql, tc.deliveries...)
			if v := tc.check(ev); len(v) == 0 {
				t.Errorf("the check passed a broken world")
			} else {
				t.Logf("found: %s", v[0])
			}
		})
	}
	t.Run("a world that keeps them all", func(t *testing.T) {
		t.Parallel()
		// lead 3 parked while both providers were out of credits; its
		// hunter miss bought twice (a kill between the miss's settle and
		// the lead's record), then a call in doubt.
		ev := brokenFixture(t, recordSend("lead2@example.test", "m2@acme.test", 1, "delivery_unknown")+`;
			INSERT INTO provider_calls (workspace_id, lead_id, provider, state, cost_usd, outcome)
			SELECT l.workspace_id, l.id, 'hunter', 'settled', 0.01, o FROM leads l, unnest(ARRAY['not_found', 'not_found', 'in_doubt']) o
			WHERE l.email = 'lead3@example.test';
			INSERT INTO lead_enrichment (lead_id, workspace_id, status, negative_cache_until, provider)
			SELECT l.id, l.workspace_id, 'unreachable', now() + interval '1 day', 'findymail' FROM leads l WHERE l.email = 'lead3@example.test'`,
			sent(16*time.Hour, "lead2@example.test", "m2@acme.test", 1))
		ev.providerModes = []providerModeChange{{at: day, provider: "findymail", mode: "quota_exhausted"}, {at: day, provider: "hunter", mode: "quota_exhausted"}}
		for _, c := range append(checks, enrichmentChecks...) {
			if v := c.run(ev); len(v) > 0 {
				t.Errorf("%s: %v", c.name, v)
			}
		}
	})
}

// A follow-up sent after a reply is found even when a later write (the
// tick settling the follow-up it sent) moved the enrollment's updated_at
// past it: the stop counts from when the harness first saw it. Found by
// TestHarnessFindsBrokenBuilds: a build claiming replied enrollments'
// follow-ups went unnoticed in 12 runs, each send moving updated_at on.
func TestStopsCheckCountsFromWhenTheStopWasSeen(t *testing.T) {
	t.Parallel()
	ev := brokenFixture(t, recordSend("lead1@example.test", "m1s2@acme.test", 2, "sent")+`;
		UPDATE enrollments e SET status = 'replied', updated_at = '2026-06-03 12:00:00+00' FROM leads l WHERE l.id = e.lead_id AND l.email = 'lead1@example.test'`,
		sent(11*time.Hour, "lead1@example.test", "m1s2@acme.test", 2))
	if v := checkStops(ev); len(v) > 0 {
		t.Fatalf("without an observation the stop counts from updated_at (12:00), after the 11:00 follow-up; got %v", v)
	}
	ev.stopsSeen = map[int64]time.Time{}
	for id, e := range ev.enrollments {
		if e.email == "lead1@example.test" {
			ev.stopsSeen[id] = day.Add(10*time.Hour + 30*time.Minute)
		}
	}
	if v := checkStops(ev); len(v) == 0 {
		t.Error("a follow-up at 11:00 to an enrollment seen replied at 10:30 passed")
	} else {
		t.Logf("found: %s", v[0])
	}
}
