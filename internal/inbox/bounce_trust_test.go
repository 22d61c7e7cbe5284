package inbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence"
)

// A bounce counts only for a message we sent (issue 25, finding 1).

// dsnReport is a delivery report to mailbox from sender, failing each of
// recipients with 5.1.1; contentType is the top-level type (with boundary
// "b"), original the returned message's Message-ID ("" for none).
func dsnReport(sender, mailbox, contentType, original string, recipients ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: Undelivered Mail Returned to Sender\r\nMIME-Version: 1.0\r\nContent-Type: %s\r\n\r\n", sender, mailbox, contentType)
	b.WriteString("--b\r\nContent-Type: text/plain\r\n\r\nYour message could not be delivered.\r\n")
	b.WriteString("--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.evil.test\r\n")
	for _, r := range recipients {
		fmt.Fprintf(&b, "\r\nFinal-Recipient: rfc822; %s\r\nAction: failed\r\nStatus: 5.1.1\r\n", r)
	}
	if original != "" {
		fmt.Fprintf(&b, "--b\r\nContent-Type: text/rfc822-headers\r\n\r\nFrom: %s\r\nMessage-ID: <%s>\r\nSubject: Hi\r\n", mailbox, original)
	}
	b.WriteString("--b--\r\n")
	return []byte(b.String())
}

const reportType = "multipart/report; report-type=delivery-status; boundary=b"

// enrollUnmailed adds leads Extra1..Extra<n> to the campaign without mailing
// them, and returns the mailbox each was bound to.
func (f *inboxFixture) enrollUnmailed(n int) map[string]string {
	f.t.Helper()
	f.exec(`INSERT INTO leads (workspace_id, first_name, email, timezone)
		SELECT w.id, 'Extra' || g, 'extra' || g || '@example.test', 'UTC' FROM workspaces w, generate_series(1, $1::int) g`, n)
	if _, err := sequence.Enroll(context.Background(), f.pool, sequence.EnrollRequest{Workspace: "acme", Campaign: "q4"}, time.Now().Add(time.Hour)); err != nil {
		f.t.Fatal(err)
	}
	rows, err := f.pool.Query(context.Background(), `SELECT l.email, m.address FROM enrollments e JOIN leads l ON l.id = e.lead_id
		JOIN mailboxes m ON m.id = e.mailbox_id WHERE l.first_name LIKE 'Extra%'`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	bound := map[string]string{}
	for rows.Next() {
		var email, mb string
		if err := rows.Scan(&email, &mb); err != nil {
			f.t.Fatal(err)
		}
		bound[email] = mb
	}
	if len(bound) != n {
		f.t.Fatalf("%d of %d extra leads enrolled", len(bound), n)
	}
	return bound
}

func (f *inboxFixture) count(sql string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// A delivery-status part inside a multipart/mixed, from anyone, and a
// well-formed report naming a lead the mailbox never mailed: neither ends a
// sequence nor suppresses an address. Before the fix both bounced.
func TestInboxTickIgnoresForgedBounces(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	bound := f.enrollUnmailed(1)
	_, mb1 := f.sent(1)
	attached := dsnReport("mallory@evil.test", mb1, "multipart/mixed; boundary=b", "", "lead1@example.test")
	if err := f.imap.Deliver(mb1, attached); err != nil {
		t.Fatal(err)
	}
	mb := bound["extra1@example.test"]
	if err := f.imap.Deliver(mb, dsnReport("mallory@evil.test", mb, reportType, "", "extra1@example.test")); err != nil {
		t.Fatal(err)
	}

	rep := f.tick(TickOptions{})
	if f.status(1) != "active" || f.str(`SELECT e.status FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.first_name = 'Extra1'`) != "active" {
		t.Fatalf("report %+v: a forged bounce ended a sequence", rep)
	}
	if n := f.count(`SELECT count(*) FROM suppressions`); n != 0 {
		t.Fatalf("%d addresses suppressed by forged bounces", n)
	}
	if rep.Outcomes[OutcomeOther] != 1 || rep.Outcomes[OutcomeUnmatched] != 1 {
		t.Errorf("report %+v, want the attachment as other and the never-mailed report unmatched", rep)
	}
}

// One 80 KB report naming 1,000 enrolled, never-mailed addresses (and one
// we did mail) is ignored whole, with one inbox_suspicious event. Before
// the fix it bounced every enrollment of the mailbox it named and
// suppressed their addresses.
func TestInboxTickIgnoresAThousandRecipientReport(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	bound := f.enrollUnmailed(1000)
	_, mb := f.sent(1)
	recipients := []string{"lead1@example.test"}
	for email := range bound {
		recipients = append(recipients, email)
	}
	raw := dsnReport("mallory@evil.test", mb, reportType, "", recipients...)
	if len(raw) >= MessageBytesMax {
		t.Fatalf("the report is %d bytes, past what the tick reads", len(raw))
	}
	if err := f.imap.Deliver(mb, raw); err != nil {
		t.Fatal(err)
	}

	rep := f.tick(TickOptions{})
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status <> 'active'`); n != 0 || f.status(1) != "active" {
		t.Fatalf("report %+v: %d enrollments ended by a mass report", rep, n)
	}
	if n := f.count(`SELECT count(*) FROM suppressions`); n != 0 {
		t.Fatalf("%d addresses suppressed by a mass report", n)
	}
	if rep.Outcomes[OutcomeSuspicious] != 1 {
		t.Errorf("report %+v, want one suspicious message", rep)
	}
	f.tick(TickOptions{}) // read again: still one event
	if got := f.str(`SELECT count(*) || ' ' || min(payload->>'never_mailed') FROM events WHERE kind = 'inbox_suspicious'`); got != "1 1000" {
		t.Errorf("inbox_suspicious events = %q, want one naming 1000 never-mailed addresses", got)
	}
}

// A genuine report matched by its original's Message-ID ends that send's
// enrollment and suppresses that address only, whatever other recipients
// it lists; a VERP return path matches a report that kept neither.
func TestInboxTickMatchesBouncesToOurSends(t *testing.T) {
	t.Parallel()
	f := newInboxFixtureWith(t, fixtureOptions{mailbox: "    verp: true\n"})
	// Every message went out with its own return path.
	for _, m := range f.smtp.Messages() {
		if !strings.Contains(m.From, "+b.") {
			t.Fatalf("MAIL FROM %q is not a VERP return path", m.From)
		}
		if ret := m.Header.Get("Return-Path"); ret != "" {
			t.Fatalf("the message carries a Return-Path header %q", ret)
		}
	}
	id2, mb2 := f.sent(2)
	if err := f.imap.Deliver(mb2, dsnReport("MAILER-DAEMON@mx.example.test", mb2, reportType, id2, "lead2@example.test", "lead3@example.test")); err != nil {
		t.Fatal(err)
	}
	// Lead 4's report names an alias and no original: only its return path,
	// as the server delivered it, says which message bounced.
	id4, mb4 := f.sent(4)
	verp := f.returnPath(id4)
	r4 := dsnReport("MAILER-DAEMON@mx.example.test", verp, reportType, "", "alias-of-lead4@example.test")
	if err := f.imap.Deliver(mb4, r4); err != nil {
		t.Fatal(err)
	}
	// The same with a return path whose MAC is wrong: it matches nothing.
	id5, mb5 := f.sent(5)
	forged := f.returnPath(id5)
	forged = forged[:strings.LastIndexByte(forged, '.')+1] + "aaaaaaaaaaaaaaaa@" + forged[strings.IndexByte(forged, '@')+1:]
	if err := f.imap.Deliver(mb5, dsnReport("mallory@evil.test", forged, reportType, "", "alias-of-lead5@example.test")); err != nil {
		t.Fatal(err)
	}

	rep := f.tick(TickOptions{})
	for n, want := range map[int]string{2: "bounced", 3: "active", 4: "bounced", 5: "active"} {
		if got := f.status(n); got != want {
			t.Errorf("lead %d: %s, want %s (report %+v)", n, got, want, rep)
		}
	}
	if got := f.str(`SELECT string_agg(email, ',' ORDER BY email) FROM suppressions`); got != "lead2@example.test,lead4@example.test" {
		t.Errorf("suppressions = %s", got)
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE bounced_at IS NOT NULL`); n != 2 {
		t.Errorf("%d sends recorded as bounced, want 2", n)
	}
}

// returnPath is the MAIL FROM the SMTP server got for Message-ID id.
func (f *inboxFixture) returnPath(id string) string {
	f.t.Helper()
	for _, m := range f.smtp.Messages() {
		if strings.Contains(m.Header.Get("Message-Id"), id) {
			return m.From
		}
	}
	f.t.Fatalf("no message %s", id)
	return ""
}

// Bounces read from the INBOX feed the bounce-rate guard: every send of a
// mailbox bouncing (past its campaign's 2 in a row) pauses it, with a
// mailbox_paused event naming the rate.
func TestInboxTickBouncesPauseTheMailbox(t *testing.T) {
	t.Parallel()
	f := newInboxFixtureWith(t, fixtureOptions{campaign: "bounce_guard: {rate: 0%, in_a_row: 2}\n"})
	bounced := 0
	for n := 1; n <= 5; n++ {
		if _, mb := f.sent(n); mb == "sdr01@acme.test" {
			f.deliver("postfix-bounce.eml", n)
			bounced++
		}
	}
	if bounced < 2 {
		t.Fatalf("sdr01 sent %d messages; the test needs 2", bounced)
	}
	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeMailboxPaused] != 1 || rep.Outcomes[OutcomeBounced] != bounced {
		t.Fatalf("report = %+v", rep)
	}
	if got := f.str(`SELECT address || ' ' || pause_reason FROM mailboxes WHERE paused_until > now()`); !strings.HasPrefix(got, "sdr01@acme.test bounce rate 100.0%") {
		t.Errorf("paused = %q", got)
	}
	if got := f.str(`SELECT payload->>'bounce_rate' FROM events WHERE kind = 'mailbox_paused'`); got != "1" {
		t.Errorf("event bounce_rate = %s", got)
	}
}

// A sender cannot put Slack markup (a link) in an inbox_suspicious alert.
func TestEventSender(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Mallory <mallory@evil.test>":                             "mallory@evil.test",
		`"<https://evil.test|reset your password>" <m@evil.test>`: "m@evil.test",
		"<https://evil.test|click>":                               "https://evil.testclick",
		"":                                                        "an unknown sender",
	} {
		if got := eventSender(in); got != want {
			t.Errorf("eventSender(%q) = %q, want %q", in, got, want)
		}
	}
}

// Issue 25 follow-up: a flood of forged reports flooded Slack, one
// inbox_suspicious alert per message. Every report keeps its event in the
// outbox, but only the first of a mailbox in an hour is an alert (posted);
// another mailbox, or the next hour, has its own.
func TestInboxSuspiciousAlertsOncePerMailboxAnHour(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	forge := func(mb string, n, reports int) {
		t.Helper()
		for r := 0; r < reports; r++ {
			var names []string
			for i := 0; i < 10; i++ {
				names = append(names, fmt.Sprintf("victim%d-%d-%d@example.test", n, r, i))
			}
			if err := f.imap.Deliver(mb, dsnReport("mallory@evil.test", mb, reportType, "", names...)); err != nil {
				t.Fatal(err)
			}
		}
	}
	alerts := func() string {
		return f.str(`SELECT count(*) || ' events, ' || count(*) FILTER (WHERE alert) || ' alerts, '
			|| count(DISTINCT mailbox_id) FILTER (WHERE alert) || ' mailboxes alerted' FROM events WHERE kind = 'inbox_suspicious'`)
	}
	forge("sdr01@acme.test", 1, 20)
	forge("sdr02@acme.test", 2, 3)
	if rep := f.tick(TickOptions{}); rep.Outcomes[OutcomeSuspicious] != 23 {
		t.Fatalf("report %+v, want 23 suspicious messages", rep)
	}
	if got := alerts(); got != "23 events, 2 alerts, 2 mailboxes alerted" {
		t.Errorf("after a flood over two mailboxes: %s, want 23 events, 2 alerts (one per mailbox)", got)
	}
	forge("sdr01@acme.test", 3, 5)
	if rep := f.tick(TickOptions{Now: func() time.Time { return time.Now().Add(time.Hour) }}); rep.Outcomes[OutcomeSuspicious] != 5 {
		t.Fatalf("an hour later: report %+v, want 5 suspicious messages", rep)
	}
	if got := alerts(); got != "28 events, 3 alerts, 2 mailboxes alerted" {
		t.Errorf("an hour later: %s, want one more alert", got)
	}
}
