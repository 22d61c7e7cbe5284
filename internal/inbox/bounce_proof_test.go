package inbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store"
)

// Issue 37, item 2: a bounce counts only when it proves it answers our
// message (a VERP return path whose MAC verifies, or a Message-ID we sent
// to the recipient the report names, from that send's mailbox). A report
// whose only link to us is Final-Recipient ends nothing, suppresses
// nothing, counts toward no bounce rate, and is recorded as unmatched.

// mailMore enrolls leads More1..More<n> due now and sends them step 1, and
// returns the addresses each mailbox mailed (the five fixture leads too).
func (f *inboxFixture) mailMore(n int) map[string][]string {
	f.t.Helper()
	ctx := context.Background()
	f.exec(`INSERT INTO leads (workspace_id, first_name, email, timezone)
		SELECT w.id, 'More' || g, 'more' || g || '@example.test', 'UTC' FROM workspaces w, generate_series(1, $1::int) g`, n)
	if _, err := sequence.Enroll(ctx, f.pool, sequence.EnrollRequest{Workspace: "acme", Campaign: "q4"}, time.Now().Add(-time.Minute)); err != nil {
		f.t.Fatal(err)
	}
	mailer := sequence.NewMailer(sequence.MailerOptions{Timeout: 10 * time.Second})
	defer mailer.Close()
	if rep, err := sequence.RunTick(ctx, f.tickPool, sequence.TickOptions{Mailer: mailer}); err != nil || rep.Sent != n {
		f.t.Fatalf("email tick = %+v, %v; want %d sent", rep, err, n)
	}
	rows, err := f.pool.Query(ctx, `SELECT m.address, l.email FROM sends s JOIN enrollments e ON e.id = s.enrollment_id
		JOIN leads l ON l.id = e.lead_id JOIN mailboxes m ON m.id = s.mailbox_id WHERE s.step = 1 ORDER BY l.email`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	mailed := map[string][]string{}
	for rows.Next() {
		var mb, email string
		if err := rows.Scan(&mb, &email); err != nil {
			f.t.Fatal(err)
		}
		mailed[mb] = append(mailed[mb], email)
	}
	return mailed
}

// untouched fails the test when anything ended, was suppressed or was
// recorded as bounced.
func (f *inboxFixture) untouched(what string, rep *TickReport) {
	f.t.Helper()
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status <> 'active'`); n != 0 {
		f.t.Errorf("%s ended %d sequences (report %+v)", what, n, rep)
	}
	if n := f.count(`SELECT count(*) FROM suppressions`); n != 0 {
		f.t.Errorf("%s suppressed %d addresses", what, n)
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE bounced_at IS NOT NULL`); n != 0 {
		f.t.Errorf("%s recorded %d sends as bounced (the bounce-rate guard counts them)", what, n)
	}
	if n := f.count(`SELECT count(*) FROM mailboxes WHERE paused_until IS NOT NULL`); n != 0 {
		f.t.Errorf("%s paused %d mailboxes: %s", what, n, f.str(`SELECT string_agg(pause_reason, '; ') FROM mailboxes`))
	}
}

// A forged report whose only link to us is Final-Recipient, naming an
// address the mailbox mailed: before the fix it ended that sequence and
// suppressed the address, on a VERP mailbox too (it fell back to the same
// match). Now it is unmatched, shown by the tick and by `why mailbox`.
func TestInboxTickFinalRecipientAloneProvesNothing(t *testing.T) {
	t.Parallel()
	for name, mailbox := range map[string]string{"plain": "", "verp": "    verp: true\n"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newInboxFixtureWith(t, fixtureOptions{mailbox: mailbox})
			_, mb := f.sent(1)
			if err := f.imap.Deliver(mb, dsnReport("attacker@evil.test", mb, reportType, "", "Lead1@Example.test")); err != nil {
				t.Fatal(err)
			}
			rep := f.tick(TickOptions{})
			f.untouched("a Final-Recipient-only report", rep)
			if rep.Outcomes[OutcomeUnmatched] != 1 || rep.Outcomes[OutcomeBounced] != 0 {
				t.Errorf("report %+v, want the report unmatched", rep)
			}
			if len(rep.Unmatched) != 1 || rep.Unmatched[0].Mailbox != mb || !strings.Contains(rep.Unmatched[0].Reason, "attacker@evil.test") {
				t.Errorf("report's unmatched = %+v, want the one report from attacker@evil.test", rep.Unmatched)
			}
			x, err := status.ExplainMailbox(context.Background(), f.pool, time.Now(), mb, "")
			if err != nil {
				t.Fatal(err)
			}
			if x.Inbox == nil || len(x.Inbox.Unmatched) != 1 || x.Inbox.UnmatchedTotal != 1 ||
				!strings.Contains(x.Inbox.Unmatched[0].Reason, "attacker@evil.test") || x.Bounces != 0 {
				t.Errorf("why mailbox = %+v (inbox %+v), want the unmatched report and no bounce", x, x.Inbox)
			}
		})
	}
}

// One message listing 10 addresses the mailbox mailed and 5 guesses:
// before the fix it ended all 10 without an inbox_suspicious event.
func TestInboxTickMassReportOfMailedAddressesEndsNothing(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	mailed := f.mailMore(24)["sdr01@acme.test"]
	if len(mailed) < 10 {
		t.Fatalf("sdr01 mailed %d addresses; the test needs 10", len(mailed))
	}
	names := append([]string{}, mailed[:10]...)
	for i := 0; i < 5; i++ {
		names = append(names, fmt.Sprintf("guess%d@example.test", i))
	}
	if err := f.imap.Deliver("sdr01@acme.test", dsnReport("attacker@evil.test", "sdr01@acme.test", reportType, "", names...)); err != nil {
		t.Fatal(err)
	}
	rep := f.tick(TickOptions{})
	f.untouched("a report naming 10 mailed addresses", rep)
	if rep.Outcomes[OutcomeUnmatched] != 1 {
		t.Errorf("report %+v, want one unmatched report", rep)
	}
}

// Six forged reports naming six addresses a mailbox mailed: before the fix
// they paused it for 24 h ("bounce rate ..."), at the default limits.
func TestInboxTickForgedReportsNeverPauseAMailbox(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	mailed := f.mailMore(16)["sdr01@acme.test"]
	if len(mailed) < 6 {
		t.Fatalf("sdr01 mailed %d addresses; the test needs 6", len(mailed))
	}
	for _, a := range mailed[:6] {
		if err := f.imap.Deliver("sdr01@acme.test", dsnReport("attacker@evil.test", "sdr01@acme.test", reportType, "", a)); err != nil {
			t.Fatal(err)
		}
	}
	rep := f.tick(TickOptions{})
	f.untouched("six forged reports", rep)
	if rep.Outcomes[OutcomeUnmatched] != 6 || rep.Outcomes[OutcomeMailboxPaused] != 0 {
		t.Errorf("report %+v, want 6 unmatched reports and no pause", rep)
	}
	id := int64(f.count(`SELECT id FROM mailboxes WHERE address = 'sdr01@acme.test'`))
	b, err := store.MailboxBounceStats(context.Background(), f.pool, id, store.BounceLimits{Window: sequence.BounceWindow})
	if err != nil || b.Bounces != 0 {
		t.Errorf("bounce-rate guard counts %d bounces (%v), want 0", b.Bounces, err)
	}
}

// dsnWith is dsnReport with extra top-level header lines and per-message
// fields, each line without its CRLF.
func dsnWith(sender, mailbox string, headers, perMessage []string, original string, recipients ...string) []byte {
	raw := string(dsnReport(sender, mailbox, reportType, original, recipients...))
	if len(headers) > 0 {
		raw = strings.Join(headers, "\r\n") + "\r\n" + raw
	}
	if len(perMessage) > 0 {
		raw = strings.Replace(raw, "Reporting-MTA: dns; mx.evil.test\r\n", "Reporting-MTA: dns; mx.evil.test\r\n"+strings.Join(perMessage, "\r\n")+"\r\n", 1)
	}
	return []byte(raw)
}

// Each recipient a report names is proven on its own: only the recipient
// of the send its Message-ID names counts; our Message-ID beside other
// addresses, or another mailbox's Message-ID, proves nothing. The proof
// may be the returned original, In-Reply-To/References or an
// Original-Message-ID field. Before the fix, a report naming our
// Message-ID ended that send's sequence whatever recipient it named.
func TestInboxTickProvesEachRecipientSeparately(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	mailed := f.mailMore(12)
	one, two := mailed["sdr01@acme.test"], mailed["sdr02@acme.test"]
	if len(one) < 4 || len(two) < 3 {
		t.Fatalf("mailed %v; the test needs 4 and 3", mailed)
	}
	id := func(email string) string {
		return f.str(`SELECT s.message_id FROM sends s JOIN enrollments e ON e.id = s.enrollment_id JOIN leads l ON l.id = e.lead_id
			WHERE l.email = $1 AND s.step = 1`, email)
	}
	const daemon = "MAILER-DAEMON@mx.example.test"
	// Proven by the returned original; the other addresses it lists are not.
	deliver := func(mb string, raw []byte) {
		t.Helper()
		if err := f.imap.Deliver(mb, raw); err != nil {
			t.Fatal(err)
		}
	}
	deliver("sdr01@acme.test", dsnReport(daemon, "sdr01@acme.test", reportType, id(one[0]), strings.ToUpper(one[0]), one[1], one[2]))
	// Our Message-ID, but naming only addresses that send did not go to.
	deliver("sdr01@acme.test", dsnReport(daemon, "sdr01@acme.test", reportType, id(one[3]), one[1], one[2]))
	// Proven by In-Reply-To alone (Gmail, Microsoft 365 set it).
	deliver("sdr02@acme.test", dsnWith(daemon, "sdr02@acme.test", []string{"In-Reply-To: <" + id(two[0]) + ">"}, nil, "", two[0]))
	// Proven by an Original-Message-ID field of the report.
	deliver("sdr02@acme.test", dsnWith(daemon, "sdr02@acme.test", nil, []string{"Original-Message-ID: <" + id(two[1]) + ">"}, "", two[1]))
	// Another mailbox's Message-ID in this mailbox's INBOX.
	deliver("sdr02@acme.test", dsnReport(daemon, "sdr02@acme.test", reportType, id(one[1]), one[1]))

	rep := f.tick(TickOptions{})
	got := f.str(`SELECT string_agg(l.email, ',' ORDER BY l.email) FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE e.status = 'bounced'`)
	want := strings.Join(sorted(one[0], two[0], two[1]), ",")
	if got != want {
		t.Errorf("bounced = %s, want %s (report %+v)", got, want, rep)
	}
	if got := f.str(`SELECT coalesce(string_agg(email, ',' ORDER BY email), '') FROM suppressions`); got != want {
		t.Errorf("suppressed = %s, want %s", got, want)
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE bounced_at IS NOT NULL`); n != 3 {
		t.Errorf("%d sends recorded as bounced, want 3", n)
	}
	// The first report's two unproven names, the second and the fifth report.
	if rep.Outcomes[OutcomeBounced] != 3 || rep.Outcomes[OutcomeUnmatched] != 3 {
		t.Errorf("report %+v, want 3 bounced and 3 unmatched", rep)
	}
}

func sorted(s ...string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// A proven report's permanence is its proven recipient's own status: a
// 5.x.x of an unproven name beside it suppresses nothing.
func TestInboxTickHardnessIsTheProvenRecipients(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	id1, mb := f.sent(1)
	raw := strings.Replace(string(dsnReport("MAILER-DAEMON@mx.example.test", mb, reportType, id1, "lead1@example.test", "other@example.test")),
		"Status: 5.1.1", "Status: 4.4.7", 1)
	if err := f.imap.Deliver(mb, []byte(raw)); err != nil {
		t.Fatal(err)
	}
	rep := f.tick(TickOptions{})
	if f.status(1) != "bounced" || f.count(`SELECT count(*) FROM suppressions`) != 0 || f.count(`SELECT count(*) FROM sends WHERE bounced_at IS NOT NULL`) != 0 {
		t.Errorf("report %+v: lead 1 %s, %d suppressed, want a soft bounce without suppression", rep, f.status(1), f.count(`SELECT count(*) FROM suppressions`))
	}
}
