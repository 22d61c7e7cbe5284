package sequence

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
)

func TestTickSendsAndThreadsFollowUps(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 2})
	before := time.Now()

	rep := f.tick(TickOptions{})
	if rep.Claimed != 3 || rep.Sent != 3 || rep.Outcomes[OutcomeSent] != 3 {
		t.Fatalf("first tick = %+v", rep)
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE status = 'sent' AND sent_at IS NOT NULL`); n != 3 {
		t.Errorf("%d sent rows, want 3", n)
	}
	var minNext time.Time
	f.pool.QueryRow(context.Background(), `SELECT min(next_send_at) FROM enrollments WHERE current_step = 2`).Scan(&minNext)
	if minNext.Before(before.Add(72*time.Hour)) || minNext.After(time.Now().Add(72*time.Hour)) {
		t.Errorf("step 2 due at %s, want sent time + 72h", minNext)
	}
	if n := f.count(`SELECT count(*) FROM tick_runs WHERE kind = 'email' AND finished_at IS NOT NULL AND exit_status = 0 AND claimed = 3`); n != 1 {
		t.Errorf("%d finished tick_runs rows, want 1", n)
	}
	// Nothing is due until the delay passes.
	if rep := f.tick(TickOptions{}); rep.Claimed != 0 {
		t.Fatalf("second tick claimed %d before the delay", rep.Claimed)
	}

	f.due()
	rep = f.tick(TickOptions{})
	if rep.Outcomes[OutcomeCompleted] != 3 {
		t.Fatalf("follow-up tick = %+v", rep)
	}
	msgs := f.srv.Messages()
	if len(msgs) != 6 {
		t.Fatalf("server got %d messages, want 6", len(msgs))
	}
	byRcpt := map[string][]smtptest.Message{}
	for _, m := range msgs {
		byRcpt[m.To[0]] = append(byRcpt[m.To[0]], m)
	}
	for rcpt, ms := range byRcpt {
		first, second := ms[0], ms[1]
		if first.From != second.From {
			t.Errorf("%s: follow-up from %s, step 1 from %s; the mailbox must be sticky", rcpt, second.From, first.From)
		}
		if second.Header.Get("In-Reply-To") != first.Header.Get("Message-Id") || second.Header.Get("References") != first.Header.Get("Message-Id") {
			t.Errorf("%s: In-Reply-To %q References %q, want %q", rcpt, second.Header.Get("In-Reply-To"), second.Header.Get("References"), first.Header.Get("Message-Id"))
		}
		if second.Header.Get("Subject") != "Re: "+first.Header.Get("Subject") {
			t.Errorf("%s: follow-up subject %q", rcpt, second.Header.Get("Subject"))
		}
	}
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'completed'`); n != 3 {
		t.Errorf("%d completed enrollments, want 3", n)
	}
	var stored string
	f.pool.QueryRow(context.Background(), `SELECT '<' || message_id || '>' FROM sends WHERE step = 1 LIMIT 1`).Scan(&stored)
	found := false
	for _, m := range msgs {
		found = found || m.Header.Get("Message-Id") == stored
	}
	if !found {
		t.Errorf("stored Message-ID %s was not the one sent", stored)
	}
}

func TestTickQuotaPausesMailboxAndMovesStepOneLeads(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 40, mailboxes: 3})
	limited := "sdr01@acme.test"
	f.srv.Script(smtptest.Rule{Stage: smtptest.StageMail, From: limited, Code: 550, Enhanced: "5.4.5", Message: "Daily user sending limit exceeded"})
	onLimited := f.count(`SELECT count(*) FROM enrollments e JOIN mailboxes m ON m.id = e.mailbox_id WHERE m.address = $1`, limited)
	if onLimited == 0 {
		t.Fatal("no lead bound to the limited mailbox")
	}
	// One lead already had step 1 from the limited mailbox: its follow-up
	// must wait for that mailbox.
	f.exec(`UPDATE enrollments e SET current_step = 2 FROM mailboxes m
		WHERE m.id = e.mailbox_id AND m.address = $1 AND e.id = (SELECT min(e2.id) FROM enrollments e2 WHERE e2.mailbox_id = m.id)`, limited)
	f.exec(`INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, sent_at)
		SELECT e.id, 1, e.mailbox_id, 'old-' || e.id || '@acme.test', 'sent', now() FROM enrollments e WHERE current_step = 2`)

	rep := f.tick(TickOptions{})
	if got := f.srv.Attempts(limited); got != 1 {
		t.Errorf("limited mailbox got %d attempts in one tick, want 1", got)
	}
	if rep.Outcomes[OutcomeMailboxPaused] != 1 {
		t.Errorf("outcomes = %v, want one mailbox_paused", rep.Outcomes)
	}
	// Every step-1 lead still went out, from the healthy mailboxes.
	if rep.Sent != 39 || f.srv.Accepted() != 39 {
		t.Errorf("sent %d (server %d), want 39 step-1 messages", rep.Sent, f.srv.Accepted())
	}
	for _, m := range f.srv.Messages() {
		if m.From == limited {
			t.Fatalf("message accepted from the limited mailbox: %+v", m.To)
		}
	}
	var pausedUntil time.Time
	var reason string
	f.pool.QueryRow(context.Background(), `SELECT paused_until, pause_reason FROM mailboxes WHERE address = $1`, limited).Scan(&pausedUntil, &reason)
	if d := time.Until(pausedUntil); d < 23*time.Hour || d > 25*time.Hour || !strings.Contains(reason, "5.4.5") {
		t.Errorf("paused_until in %s, reason %q; want ~24h and the reply", d, reason)
	}
	if n := f.count(`SELECT count(*) FROM events WHERE kind = 'mailbox_paused' AND payload->>'address' = $1`, limited); n != 1 {
		t.Errorf("%d mailbox_paused events, want 1", n)
	}
	var followDue time.Time
	var followMailbox string
	f.pool.QueryRow(context.Background(), `SELECT e.next_send_at, m.address FROM enrollments e JOIN mailboxes m ON m.id = e.mailbox_id WHERE e.current_step = 2 AND e.status = 'active' AND e.id IN (SELECT enrollment_id FROM sends WHERE message_id LIKE 'old-%')`).Scan(&followDue, &followMailbox)
	if followMailbox != limited || !followDue.Equal(pausedUntil) {
		t.Errorf("follow-up on %s due %s; want it to wait on %s until %s", followMailbox, followDue, limited, pausedUntil)
	}
	if n := f.count(`SELECT count(*) FROM enrollments e JOIN mailboxes m ON m.id = e.mailbox_id WHERE m.address = $1 AND e.current_step = 1`, limited); n != 0 {
		t.Errorf("%d step-1 enrollments still on the paused mailbox", n)
	}
	// A second tick leaves the paused mailbox alone.
	f.due()
	f.tick(TickOptions{})
	if got := f.srv.Attempts(limited); got != 1 {
		t.Errorf("paused mailbox retried: %d attempts", got)
	}
}

func TestTickBounceStopsSequence(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 2, mailboxes: 1})
	f.srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, To: "lead1@example.test", Code: 550, Enhanced: "5.1.1", Message: "No such user"})
	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeBounced] != 1 || rep.Sent != 1 {
		t.Fatalf("tick = %+v", rep)
	}
	if n := f.count(`SELECT count(*) FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = 'lead1@example.test' AND e.status = 'bounced'`); n != 1 {
		t.Errorf("bounced lead's enrollment not bounced")
	}
	if n := f.count(`SELECT count(*) FROM suppressions WHERE email = 'lead1@example.test' AND reason = 'bounced'`); n != 1 {
		t.Errorf("bounced address not suppressed")
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE status = 'failed' AND error LIKE '%5.1.1%'`); n != 1 {
		t.Errorf("failed send not recorded with the reply")
	}
	f.due()
	rep = f.tick(TickOptions{})
	if rep.Claimed != 1 || rep.Sent != 1 {
		t.Errorf("follow-up tick = %+v; the bounced lead must not be claimed", rep)
	}
}

func TestTickCrashBetweenSendingAndSentIsNotResent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 2, mailboxes: 1})
	// A tick died after recording 'sending' for lead 1: its lease ran out
	// (next_send_at is past) and the row is still 'sending'.
	f.exec(`INSERT INTO sends (enrollment_id, step, mailbox_id, message_id)
		SELECT e.id, 1, e.mailbox_id, 'crashed@acme.test' FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = 'lead1@example.test'`)
	f.exec(`UPDATE enrollments SET locked_by = 'dead-tick', locked_until = now() - interval '1 minute'`)

	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeUnknown] != 1 || rep.Sent != 1 {
		t.Fatalf("tick = %+v, want 1 unknown and 1 sent", rep)
	}
	for _, m := range f.srv.Messages() {
		if m.To[0] == "lead1@example.test" {
			t.Fatal("the crashed step was sent again")
		}
	}
	var status, lastError string
	f.pool.QueryRow(context.Background(), `SELECT e.status, e.last_error FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = 'lead1@example.test'`).Scan(&status, &lastError)
	if status != "delivery_unknown" || !strings.Contains(lastError, "delivery unknown") {
		t.Errorf("crashed enrollment: %s %q", status, lastError)
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE message_id = 'crashed@acme.test' AND status = 'delivery_unknown'`); n != 1 {
		t.Error("the evidence row (its Message-ID) is not kept as delivery_unknown")
	}
	if n := f.count(`SELECT count(*) FROM events WHERE kind = 'delivery_unknown' AND payload->>'message_id' = 'crashed@acme.test'`); n != 1 {
		t.Errorf("%d delivery_unknown events, want 1", n)
	}
	// Never resent by a later tick.
	f.due()
	f.exec(`UPDATE enrollments SET next_send_at = now() - interval '1 second'`)
	f.tick(TickOptions{})
	for _, m := range f.srv.Messages() {
		if m.To[0] == "lead1@example.test" {
			t.Fatal("a later tick sent the unknown step")
		}
	}
}

func TestTickTransientBacksOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 1, mailboxes: 1})
	f.srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, Code: 451, Enhanced: "4.7.1", Message: "Greylisted", Times: 1})
	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeTransient] != 1 {
		t.Fatalf("tick = %+v", rep)
	}
	var attempts int
	var next time.Time
	f.pool.QueryRow(context.Background(), `SELECT attempts, next_send_at FROM enrollments`).Scan(&attempts, &next)
	if attempts != 1 || time.Until(next) < 4*time.Minute {
		t.Errorf("attempts %d, due in %s; want 1 and ~5m backoff", attempts, time.Until(next))
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE status = 'failed' AND error LIKE '%4.7.1%'`); n != 1 {
		t.Errorf("refused message not recorded as a failed send")
	}
	f.due()
	if rep := f.tick(TickOptions{}); rep.Sent != 1 {
		t.Errorf("retry tick = %+v", rep)
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE status = 'sent'`); n != 1 {
		t.Errorf("the retry did not take over the failed send row")
	}
}

// A 535 pauses the mailbox for an hour (issue 27; it disabled it for
// good); the other mailbox sends everything.
func TestTickAuthFailurePausesMailbox(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 4, mailboxes: 2})
	f.exec(`UPDATE mailboxes SET smtp_url = $1, password_env = 'RINDA_TEST_PW' WHERE address = 'sdr02@acme.test'`, f.srv.URL("sdr02"))
	f.mailer = NewMailer(MailerOptions{LookupEnv: func(string) (string, bool) { return "pw", true }})
	f.srv.Script(smtptest.Rule{Stage: smtptest.StageAuth, From: "sdr02", Code: 535, Enhanced: "5.7.8", Message: "Username and Password not accepted"})
	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeMailboxPaused] != 1 || rep.Sent != 4 {
		t.Fatalf("tick = %+v", rep)
	}
	if n := f.count(`SELECT count(*) FROM mailboxes WHERE address = 'sdr02@acme.test' AND status = 'active' AND paused_until > now()`); n != 1 {
		t.Error("mailbox not paused")
	}
	if n := f.count(`SELECT count(*) FROM events WHERE kind = 'mailbox_paused' AND payload->>'kind' = 'mailbox_auth_failed'`); n != 1 {
		t.Error("no mailbox_paused event")
	}
}

func TestTickDailyCapAndLeadsWithoutEmail(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 6, mailboxes: 1, dailyCap: 3})
	f.exec(`UPDATE leads SET email = NULL WHERE email = 'lead6@example.test'`)
	rep := f.tick(TickOptions{})
	if rep.Claimed != 3 || rep.Sent != 3 {
		t.Fatalf("tick = %+v, want 3 claimed and sent under the cap", rep)
	}
	f.due()
	if rep := f.tick(TickOptions{}); rep.Claimed != 0 {
		t.Fatalf("tick at cap claimed %d", rep.Claimed)
	}
	// Lift the cap: the two remaining leads and the three follow-ups go;
	// the lead without email waits.
	f.exec(`UPDATE mailboxes SET daily_cap = 0`)
	rep = f.tick(TickOptions{})
	if rep.Claimed != 5 || rep.Outcomes[OutcomeSent] != 2 || rep.Outcomes[OutcomeCompleted] != 3 {
		t.Fatalf("tick = %+v, want 2 step-1 and 3 follow-ups", rep)
	}
	if n := f.count(`SELECT count(*) FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email IS NULL AND e.status = 'active' AND e.current_step = 1 AND e.attempts = 0`); n != 1 {
		t.Error("lead without email is not waiting untouched")
	}
}

func TestClaimIsFairAcrossCampaigns(t *testing.T) {
	t.Parallel()
	// in_a_row off: the second claim, another tick's, serves mailboxes
	// where the first holds rows, which the bounce limit charged at the
	// claim would not (TestConcurrentTicksStopAtTheBounceLimitWhenClaiming).
	const noStreak = "bounce_guard: {in_a_row: 0}\n"
	f := newFixture(t, fixtureOptions{leads: 300, mailboxes: 2, name: "big", extraYAML: noStreak})
	f.importCampaign(campaignYAML("small", f.srv, 2, 0, "", noStreak))
	small := f.id
	ctx := context.Background()
	if _, err := Enroll(ctx, f.pool, EnrollRequest{Workspace: "acme", Campaign: "small", Keys: []string{"ext-1", "LEAD2@example.test", "ext-3", "ext-4", "ext-5"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	claim, err := store.ClaimEnrollments(ctx, f.pool, store.EmailClaimRequest{Batch: 50, Lease: time.Minute, TickID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	rows := claim.Rows
	fromSmall := 0
	for _, r := range rows {
		if r.CampaignID == small {
			fromSmall++
		}
	}
	if len(rows) != 50 || fromSmall != 5 {
		t.Errorf("claimed %d rows, %d from the small campaign; want 50 with all 5", len(rows), fromSmall)
	}
	// Leased rows are not claimed again.
	again, err := store.ClaimEnrollments(ctx, f.pool, store.EmailClaimRequest{Batch: 500, Lease: time.Minute, TickID: "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Rows) != 300+5-50 {
		t.Errorf("second claim got %d rows, want %d", len(again.Rows), 255)
	}
}

func TestEnrollIsIdempotentAndBalanced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 1800, mailboxes: 18})
	res, err := Enroll(context.Background(), f.pool, EnrollRequest{Workspace: "acme", Campaign: "q4"}, time.Now())
	if err != nil || res.Enrolled != 0 {
		t.Fatalf("second enroll = %+v, %v; want a no-op", res, err)
	}
	rows, err := f.pool.Query(context.Background(), `SELECT count(*) FROM enrollments GROUP BY mailbox_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	groups := 0
	for rows.Next() {
		var n int
		rows.Scan(&n)
		groups++
		if n < 95 || n > 105 {
			t.Errorf("a mailbox holds %d of 1800 leads, want ~100", n)
		}
	}
	if groups != 18 {
		t.Errorf("%d mailboxes used, want 18", groups)
	}
}

func TestImportCampaignUpdatesAndIsAtomic(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 30, mailboxes: 3})
	// Re-import without sdr03 and with one step: its unsent leads move.
	res := f.importCampaign(campaignYAML("q4", f.srv, 2, 0, "steps:\n  - subject: \"New {{.FirstName}}\"\n    body: \"b\"\n", ""))
	if res.Created || res.Rebound == 0 {
		t.Errorf("re-import = %+v, want an update that rebinds sdr03's leads", res)
	}
	if n := f.count(`SELECT count(*) FROM enrollments e JOIN mailboxes m ON m.id = e.mailbox_id WHERE m.address = 'sdr03@acme.test'`); n != 0 {
		t.Errorf("%d enrollments left on the removed mailbox", n)
	}
	if n := f.count(`SELECT count(*) FROM sequence_steps WHERE campaign_id = $1`, f.id); n != 1 {
		t.Errorf("%d steps after re-import, want 1", n)
	}

	// A failure half-way (a cap the database rejects) writes nothing.
	bad := strings.Replace(campaignYAML("other", f.srv, 2, 0, "", ""), "daily_cap: 0", "daily_cap: 3000000000", 1)
	c, err := ParseCampaign(strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ImportCampaign(context.Background(), f.pool, c); err == nil {
		t.Fatal("import with an out-of-range cap succeeded")
	}
	if n := f.count(`SELECT count(*) FROM campaigns WHERE name = 'other'`); n != 0 {
		t.Error("failed import left a campaign behind")
	}
}

func TestEnrollSchedulesInsideWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 1, mailboxes: 1,
		extraYAML: "window: {timezone: lead, days: [sat], start: \"10:00\", end: \"11:00\"}\n", name: "weekend"})
	f.exec(`UPDATE leads SET timezone = 'Asia/Seoul'`)
	var next time.Time
	f.pool.QueryRow(context.Background(), `SELECT next_send_at FROM enrollments`).Scan(&next)
	seoul, _ := time.LoadLocation("Asia/Seoul")
	local := next.In(time.UTC) // enrolled while the lead's zone was UTC
	if local.Weekday() != time.Saturday || local.Hour() != 10 {
		t.Errorf("step 1 due %s, want a Saturday 10:00 UTC", local)
	}
	// Not due, so not claimed and not overdue.
	if rep := f.tick(TickOptions{}); rep.Claimed != 0 && time.Now().Before(next) {
		t.Errorf("claimed %d rows outside the window", rep.Claimed)
	}
	// After a send at a Seoul Friday evening, step 2 lands on Saturday 10:00 Seoul.
	if got := f.camp.Window.Next(time.Date(2026, 12, 4, 20, 0, 0, 0, seoul), "Asia/Seoul"); !got.Equal(time.Date(2026, 12, 5, 10, 0, 0, 0, seoul)) {
		t.Errorf("Next = %s", got)
	}
}

// Duplicate leads enrolled before enroll skipped them (or enriched to the
// same address later): the tick still mails each address once per
// campaign, the later enrollment ends as a duplicate.
func TestTickMailsAnAddressOncePerCampaign(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 4, mailboxes: 2})
	f.exec(`INSERT INTO leads (workspace_id, external_id, first_name, email, timezone)
		SELECT w.id, 'dup-' || g, 'Dup' || g, ' LEAD' || g || '@Example.test ', 'UTC' FROM workspaces w, generate_series(1, 4) g WHERE w.name = 'acme'`)
	f.rewriteAddresses() // stored before canonical spellings, then migrated
	f.exec(`INSERT INTO enrollments (campaign_id, workspace_id, lead_id, mailbox_id, next_send_at)
		SELECT e.campaign_id, e.workspace_id, l.id, e.mailbox_id, now() - interval '1 minute'
		FROM leads l JOIN leads o ON o.external_id = 'ext-' || substr(l.external_id, 5) JOIN enrollments e ON e.lead_id = o.id
		WHERE l.external_id LIKE 'dup-%'`)
	rep := f.tick(TickOptions{})
	if rep.Sent != 4 || rep.Outcomes[OutcomeDuplicate] != 4 {
		t.Fatalf("tick = %+v, want 4 sent and 4 duplicates", rep)
	}
	perAddress := map[string]int{}
	for _, m := range f.srv.Messages() {
		perAddress[m.To[0]]++
	}
	for addr, n := range perAddress {
		if n != 1 || addr != strings.ToLower(addr) {
			t.Errorf("%q got %d messages, want 1 to the normalised address", addr, n)
		}
	}
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'failed' AND last_error LIKE 'duplicate address%'`); n != 4 {
		t.Errorf("%d duplicate enrollments ended, want 4", n)
	}
	// Follow-ups go only to the enrollment that holds the address.
	f.due()
	if rep := f.tick(TickOptions{}); rep.Sent != 4 || len(f.srv.Messages()) != 8 {
		t.Errorf("follow-up tick = %+v, server has %d messages; want 4 more", rep, len(f.srv.Messages()))
	}
}

// The database goes away mid-tick (the tick role's connections are cut and
// no new ones are allowed): the report holds what was committed and
// nothing else, and what was not committed is counted as unrecorded.
func TestTickReportMatchesDatabaseAfterDatabaseLoss(t *testing.T) {
	t.Parallel()
	var f *fixture
	cut := make(chan struct{})
	f = newFixture(t, fixtureOptions{leads: 300, mailboxes: 3, onAccept: func(n int) {
		if n == 150 {
			time.Sleep(100 * time.Millisecond) // earlier outcomes get flushed
			var db string
			f.pool.QueryRow(context.Background(), `SELECT current_database()`).Scan(&db)
			f.exec(`REVOKE CONNECT ON DATABASE "` + db + `" FROM PUBLIC, rindactl_tick`)
			f.exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND usename = 'rindactl_tick'`)
			close(cut)
		}
	}})
	rep, err := RunTick(context.Background(), f.tickPool, TickOptions{Mailer: f.mailer, Batch: 500})
	if err == nil {
		t.Fatal("tick without its database reported no error")
	}
	<-cut
	var db string
	f.pool.QueryRow(context.Background(), `SELECT current_database()`).Scan(&db)
	f.exec(`GRANT CONNECT ON DATABASE "` + db + `" TO PUBLIC`)

	sent := f.count(`SELECT count(*) FROM sends WHERE status = 'sent'`)
	released := f.count(`SELECT count(*) FROM enrollments WHERE locked_by IS NULL AND status = 'active' AND current_step = 1`)
	leased := f.count(`SELECT count(*) FROM enrollments WHERE locked_by IS NOT NULL`)
	t.Logf("report %v; database: %d sent, %d released, %d leased; server accepted %d", rep.Outcomes, sent, released, leased, f.srv.Accepted())
	// The report never counts an outcome the database lacks. The one
	// group whose COMMIT was under way when the backend was killed is in
	// doubt: Postgres may have committed it after the acknowledgement was
	// lost, so the tick counts it unrecorded while the database has it.
	// That is at most one group of the tick's one outcome writer, and
	// every such row is inside the report's unrecorded count.
	if rep.Sent != rep.Outcomes[OutcomeSent] || rep.Sent > sent || rep.Outcomes[OutcomeReleased] > released {
		t.Errorf("report says %d sent, %d released (outcomes %v); the database has only %d sent, %d released", rep.Sent, rep.Outcomes[OutcomeReleased], rep.Outcomes, sent, released)
	}
	inDoubt := (sent - rep.Sent) + (released - rep.Outcomes[OutcomeReleased])
	if inDoubt > tick.BatchSizeDefault {
		t.Errorf("%d outcomes recorded that the report counts unrecorded: more than the one group (%d) whose commit may be in doubt", inDoubt, tick.BatchSizeDefault)
	}
	if rep.Claimed != 300 || rep.Outcomes[OutcomeUnrecorded] != leased+inDoubt {
		t.Errorf("report: claimed %d, unrecorded %d; database: %d still leased, %d recorded in doubt", rep.Claimed, rep.Outcomes[OutcomeUnrecorded], leased, inDoubt)
	}
	total := 0
	for _, n := range rep.Outcomes {
		total += n
	}
	if total != rep.Claimed {
		t.Errorf("outcomes %v add up to %d, claimed %d", rep.Outcomes, total, rep.Claimed)
	}
	if f.srv.Accepted() < sent || leased == 0 {
		t.Errorf("server accepted %d, %d recorded sent, %d leased: the cut did not land mid-tick", f.srv.Accepted(), sent, leased)
	}
}

// Cron on several hosts runs email ticks at once against one database.
// With every lead enrolled twice under one address (in different case and
// spacing), four ticks racing over small batches still mail each address
// once, send each step at most once and settle every enrollment: sent, or
// failed as a duplicate (the holder seen by a claim, claimed in a round, or
// claimed by a racing tick).
func TestParallelTicksMailEachAddressOnce(t *testing.T) {
	t.Parallel()
	const leads = 200
	f := newFixture(t, fixtureOptions{leads: leads, mailboxes: 6})
	f.exec(`INSERT INTO leads (workspace_id, external_id, first_name, email, timezone)
		SELECT w.id, 'dup-' || g, 'Dup' || g, ' LEAD' || g || '@Example.test ', 'UTC' FROM workspaces w, generate_series(1, $1) g WHERE w.name = 'acme'`, leads)
	f.rewriteAddresses()
	f.exec(`INSERT INTO enrollments (campaign_id, workspace_id, lead_id, mailbox_id, next_send_at)
		SELECT e.campaign_id, e.workspace_id, l.id, e.mailbox_id, now() - interval '1 minute'
		FROM leads l JOIN leads o ON o.external_id = 'ext-' || substr(l.external_id, 5) JOIN enrollments e ON e.lead_id = o.id
		WHERE l.external_id LIKE 'dup-%'`)
	due := func() int {
		return f.count(`SELECT count(*) FROM enrollments WHERE status = 'active' AND current_step = 1`)
	}
	for round := 0; due() > 0; round++ {
		if round == 10 {
			t.Fatalf("%d step-1 enrollments still due after %d rounds of parallel ticks", due(), round)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := RunTick(context.Background(), f.tickPool, TickOptions{Mailer: f.mailer, Batch: 15}); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("tick: %v", err)
		}
	}
	perAddress := map[string]int{}
	for _, m := range f.srv.Messages() {
		perAddress[strings.ToLower(strings.TrimSpace(m.To[0]))]++
	}
	if len(perAddress) != leads {
		t.Errorf("%d addresses mailed, want %d", len(perAddress), leads)
	}
	for addr, n := range perAddress {
		if n != 1 {
			t.Errorf("%s got %d messages, want 1", addr, n)
		}
	}
	if n := f.count(`SELECT count(*) FROM (SELECT enrollment_id, step FROM sends GROUP BY 1, 2 HAVING count(*) > 1) x`); n != 0 {
		t.Errorf("%d steps recorded twice", n)
	}
	sent := f.count(`SELECT count(*) FROM enrollments WHERE status = 'active' AND current_step = 2`)
	dups := f.count(`SELECT count(*) FROM enrollments WHERE status = 'failed' AND last_error LIKE 'duplicate address:%' AND last_error NOT LIKE '%-1%'`)
	if sent != leads || dups != leads {
		t.Errorf("%d enrollments sent and %d failed as duplicates, want %d each", sent, dups, leads)
	}
}
