package sequence

import (
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sendcap"
	"github.com/rindactl/rindactl/internal/store"
)

// passDay makes a day go by for the ramp and the rolling 24-hour cap: the
// ramp's next step is due and every send so far is older than a day.
func (f *fixture) passDay() {
	f.exec(`UPDATE mailboxes SET ramp_next_at = now() - interval '1 second' WHERE ramp_start > 0`)
	f.exec(`UPDATE sends SET created_at = created_at - interval '25 hours', sent_at = sent_at - interval '25 hours'`)
	f.due()
}

func (f *fixture) capToday(address string) int {
	f.t.Helper()
	return f.count(`SELECT cap_today FROM mailboxes WHERE address = $1`, address)
}

func TestRampLimitsNewMailboxAndGrowsDaily(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 20, mailboxes: 1, extraYAML: "ramp: {start: 2, step: 3, every: 1d, max: 6}\n"})
	if c := f.capToday("sdr01@acme.test"); c != 2 {
		t.Fatalf("cap on day 1 = %d, want start 2", c)
	}
	if rep := f.tick(TickOptions{}); rep.Sent != 2 {
		t.Fatalf("day 1 sent %d, want the ramp's start of 2", rep.Sent)
	}
	if rep := f.tick(TickOptions{}); rep.Claimed != 0 {
		t.Fatalf("second tick on day 1 claimed %d", rep.Claimed)
	}

	f.passDay()
	if rep := f.tick(TickOptions{}); rep.Sent != 5 {
		t.Fatalf("day 2 sent %d, want start+step = 5", rep.Sent)
	}
	if c := f.capToday("sdr01@acme.test"); c != 5 {
		t.Errorf("cap on day 2 = %d, want 5", c)
	}
	f.passDay()
	f.tick(TickOptions{})
	if c := f.capToday("sdr01@acme.test"); c != 6 {
		t.Errorf("cap on day 3 = %d, want max 6", c)
	}
	// Re-importing the same campaign keeps the ramp's progress.
	f.importCampaign(campaignYAML("q4", f.srv, 1, 0, "", "ramp: {start: 2, step: 3, every: 1d, max: 6}\n"))
	if c := f.capToday("sdr01@acme.test"); c != 6 {
		t.Errorf("cap after re-import = %d, want 6 kept", c)
	}
}

func TestRampGrowthWaitsAfterBounceOrPause(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 10, mailboxes: 2, extraYAML: "ramp: {start: 1, step: 1, every: 1d, max: 10}\n"})
	f.tick(TickOptions{})
	// sdr01 had a bounce, sdr02 a 5.4.5 pause that has ended.
	f.exec(`UPDATE enrollments e SET status = 'bounced', updated_at = now()
		FROM mailboxes m WHERE m.id = e.mailbox_id AND m.address = 'sdr01@acme.test' AND e.current_step = 2`)
	f.exec(`UPDATE mailboxes SET paused_until = now() - interval '1 minute', pause_reason = 'mailbox_limit: 5.4.5 daily sending quota exceeded'
		WHERE address = 'sdr02@acme.test'`)
	f.passDay()
	f.tick(TickOptions{})
	for _, mb := range []string{"sdr01@acme.test", "sdr02@acme.test"} {
		if c := f.capToday(mb); c != 1 {
			t.Errorf("%s: cap %d after a troubled day, want growth paused at 1", mb, c)
		}
		if n := f.count(`SELECT count(*) FROM mailboxes WHERE address = $1 AND ramp_next_at > now() + interval '23 hours'`, mb); n != 1 {
			t.Errorf("%s: the period did not start over", mb)
		}
	}
	// A clean period later both grow.
	f.exec(`UPDATE enrollments SET updated_at = updated_at - interval '2 days' WHERE status = 'bounced'`)
	f.exec(`UPDATE mailboxes SET paused_until = paused_until - interval '2 days'`)
	f.passDay()
	f.tick(TickOptions{})
	for _, mb := range []string{"sdr01@acme.test", "sdr02@acme.test"} {
		if c := f.capToday(mb); c != 2 {
			t.Errorf("%s: cap %d after a clean day, want 2", mb, c)
		}
	}
}

func TestFollowUpsGoBeforeNewStartsUnderTheCap(t *testing.T) {
	t.Parallel()
	for _, first := range []bool{true, false} {
		extra := ""
		if !first {
			extra = "follow_ups_first: false\n"
		}
		f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 1, dailyCap: 3, extraYAML: extra})
		f.tick(TickOptions{}) // the three threads start
		// New leads, due before the follow-ups, and a new day.
		f.exec(`INSERT INTO leads (workspace_id, first_name, email, timezone)
			SELECT w.id, 'New' || g, 'new' || g || '@example.test', 'UTC' FROM workspaces w, generate_series(1, 5) g`)
		if _, err := Enroll(t.Context(), f.pool, EnrollRequest{Workspace: "acme", Campaign: "q4"}, time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		f.exec(`UPDATE sends SET created_at = created_at - interval '25 hours', sent_at = sent_at - interval '25 hours'`)
		f.exec(`UPDATE enrollments SET next_send_at = now() - interval '1 minute' WHERE current_step = 2`)

		rep := f.tick(TickOptions{})
		followUps := rep.Outcomes[OutcomeCompleted]
		switch {
		case rep.Sent != 3:
			t.Fatalf("follow_ups_first=%v: sent %d, want the cap of 3", first, rep.Sent)
		case first && followUps != 3:
			t.Errorf("follow_ups_first: %d follow-ups of 3 sent; new starts took the cap: %+v", followUps, rep.Outcomes)
		case !first && followUps != 0:
			t.Errorf("follow_ups_first: false sent %d follow-ups before older first steps", followUps)
		}
	}
}

func TestGapSpacesMailboxSendsAcrossTicksWithoutIdling(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 6, mailboxes: 1})
	// A second mailbox without a gap shares the campaign.
	f.importCampaign(strings.Replace(campaignYAML("q4", f.srv, 2, 0, "", ""),
		"  - address: sdr01@acme.test\n", "  - address: sdr01@acme.test\n    gap: 1h..2h\n", 1))
	f.exec(`UPDATE enrollments e SET mailbox_id = m.id FROM mailboxes m WHERE m.address = 'sdr02@acme.test' AND e.id % 2 = 0`)

	start := time.Now()
	rep := f.tick(TickOptions{})
	if rep.ByMailbox["sdr01@acme.test"] != 1 || rep.ByMailbox["sdr02@acme.test"] != 3 {
		t.Fatalf("by mailbox %v: want 1 from the gapped mailbox and all 3 from the other", rep.ByMailbox)
	}
	var notBefore time.Time
	if err := f.pool.QueryRow(t.Context(), `SELECT next_send_not_before FROM mailboxes WHERE address = 'sdr01@acme.test'`).Scan(&notBefore); err != nil {
		t.Fatal(err)
	}
	if gap := notBefore.Sub(start); gap < time.Hour-time.Minute || gap > 2*time.Hour+time.Minute {
		t.Errorf("next send not before %s after the claim, want within 1h..2h", gap)
	}
	// Another tick (any host) gets nothing from the gapped mailbox yet.
	if rep := f.tick(TickOptions{}); rep.ByMailbox["sdr01@acme.test"] != 0 {
		t.Fatalf("second tick sent from the gapped mailbox inside its gap: %+v", rep)
	}
	f.exec(`UPDATE mailboxes SET next_send_not_before = now() - interval '1 second'`)
	if rep := f.tick(TickOptions{}); rep.ByMailbox["sdr01@acme.test"] != 1 {
		t.Fatalf("after the gap: %+v, want one more send", rep)
	}
}

func TestParseCampaignRampGapIMAP(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(validCampaign, "mailboxes:\n", "ramp: {start: 20, step: 10, every: 1d, max: 200}\ngap: 60s..180s\nfollow_ups_first: false\nmailboxes:\n", 1)
	doc = strings.Replace(doc, "    smtp_url: smtp://127.0.0.1:2525\n",
		"    smtp_url: smtp://127.0.0.1:2525\n    password_env: A_PASSWORD\n    imap_url: imaps://imap.acme.test\n", 1)
	c, err := ParseCampaign(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	mb := c.Mailboxes[0]
	if mb.Cap.Ramp == nil || *mb.Cap.Ramp != (sendcap.Ramp{Start: 20, Step: 10, Every: 24 * time.Hour, Max: 200}) {
		t.Errorf("ramp = %+v", mb.Cap.Ramp)
	}
	if mb.Gap != (Gap{Min: time.Minute, Max: 3 * time.Minute}) || c.FollowUpsFirst {
		t.Errorf("gap = %+v, follow_ups_first = %v", mb.Gap, c.FollowUpsFirst)
	}
	if mb.IMAP == nil || mb.IMAP.TLS != TLSImplicit || mb.IMAP.Port != 993 || mb.IMAP.Username != "a@acme.test" {
		t.Errorf("imap = %+v", mb.IMAP)
	}
	// The stored form reads back the same.
	back, err := campaignFromRecord(c.Record())
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Mailboxes[0]; *got.Cap.Ramp != *mb.Cap.Ramp || got.Gap != mb.Gap || *got.IMAP != *mb.IMAP || back.FollowUpsFirst {
		t.Errorf("stored mailbox = %+v", got)
	}

	for _, tc := range []struct{ field, value, want string }{
		{"ramp", "{start: 0, step: 1, every: 1d, max: 5}", "ramp.start"},
		{"ramp", "{start: 5, step: 1, every: 1d, max: 4}", "ramp.max"},
		{"ramp", "{start: 5, step: 1, every: 1x, max: 9}", "ramp.every"},
		{"ramp", "{start: 5, step: 1, every: 1d, max: 9, speed: 2}", "ramp.speed: unknown field"},
		{"gap", "3m..1m", "gap"},
		{"gap", "soon", "gap"},
		{"imap_url", "imaps://u:secret@imap.acme.test", "imap_url"},
		{"imap_url", "pop3://imap.acme.test", "imap_url"},
	} {
		bad := strings.Replace(validCampaign, "    smtp_url:", "    "+tc.field+": "+tc.value+"\n    password_env: P\n    smtp_url:", 1)
		_, err := ParseCampaign(strings.NewReader(bad))
		if err == nil || !strings.Contains(err.Error(), "mailboxes[0]."+tc.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %s: error %v, want one naming mailboxes[0].%s", tc.field, tc.value, err, tc.want)
		}
	}
	if _, err := ParseCampaign(strings.NewReader(strings.Replace(validCampaign, "    smtp_url:", "    imap_url: imaps://imap.acme.test\n    smtp_url:", 1))); err == nil || !strings.Contains(err.Error(), "password_env") {
		t.Errorf("imap_url without password_env: %v", err)
	}
	if ep, err := ParseIMAPURL("imap://127.0.0.1:1143", "a@acme.test"); err != nil || ep.TLS != TLSOpportunistic {
		t.Errorf("loopback imap:// = %+v, %v; want plain allowed", ep, err)
	}
	if ep, err := ParseIMAPURL("imap://imap.acme.test", "a@acme.test"); err != nil || ep.TLS != TLSRequired || ep.Port != 143 {
		t.Errorf("remote imap:// = %+v, %v; want STARTTLS required", ep, err)
	}
}

// Two ticks claiming at the same moment (one still in its claim's
// transaction) cannot both take a gapped mailbox's turn.
func TestGapHoldsAcrossConcurrentClaims(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 4, mailboxes: 1, extraYAML: "gap: 30s..60s\n"})
	ctx := t.Context()
	txA, err := f.tickPool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback(ctx)
	// Batch 1: the first claim locks one enrollment, not the others.
	a, err := store.ClaimEnrollments(ctx, txA, store.EmailClaimRequest{Batch: 1, Lease: time.Minute, TickID: "tick-a"})
	if err != nil || len(a.Rows) != 1 {
		t.Fatalf("first claim = %d rows, %v; want the mailbox's one turn", len(a.Rows), err)
	}
	b, err := store.ClaimEnrollments(ctx, f.tickPool, store.EmailClaimRequest{Batch: 10, Lease: time.Minute, TickID: "tick-b"})
	if err != nil || len(b.Rows) != 0 || !b.Contended {
		t.Fatalf("concurrent claim = %d rows (contended %v), %v; want none while the first holds the turn", len(b.Rows), b.Contended, err)
	}
	if err := txA.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := store.ClaimEnrollments(ctx, f.tickPool, store.EmailClaimRequest{Batch: 10, Lease: time.Minute, TickID: "tick-c"})
	if err != nil || len(c.Rows) != 0 {
		t.Fatalf("claim after the first committed = %d rows, %v; want none inside the gap", len(c.Rows), err)
	}
}
