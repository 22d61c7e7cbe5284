package inbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

const (
	passwordEnv = "RINDA_TEST_INBOX_PASSWORD"
	password    = "imap-secret-1"
)

// inboxFixture is a campaign whose two mailboxes sent step 1 to five leads
// over a real SMTP server, with their INBOXes on an in-process IMAP server.
type inboxFixture struct {
	t        *testing.T
	pool     *pgxpool.Pool
	tickPool *pgxpool.Pool
	tickURL  string
	imap     *imaptest.Server
	smtp     *smtptest.Server
}

// fixtureOptions adds lines to the fixture's campaign file: campaign to
// the top level, mailbox to each mailbox.
type fixtureOptions struct {
	campaign, mailbox string
}

func newInboxFixture(t *testing.T) *inboxFixture {
	return newInboxFixtureWith(t, fixtureOptions{})
}

func newInboxFixtureWith(t *testing.T, o fixtureOptions) *inboxFixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.New(t)
	smtp := smtptest.New(t, smtptest.Options{})
	f := &inboxFixture{t: t, pool: db.Pool, tickPool: db.TickPool(t), tickURL: db.TickURL(), imap: imaptest.New(t, nil), smtp: smtp}
	var doc strings.Builder
	doc.WriteString("workspace: acme\nname: q4\n" + o.campaign + "mailboxes:\n")
	for _, mb := range []string{"sdr01@acme.test", "sdr02@acme.test"} {
		if err := f.imap.AddAccount(mb, password); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&doc, "  - address: %s\n    smtp_url: %s\n    imap_url: %s\n    password_env: %s\n%s", mb, smtp.URL(""), f.imap.URL(mb), passwordEnv, o.mailbox)
	}
	doc.WriteString("steps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"Hello {{.FirstName}}\"\n  - delay: 72h\n    body: \"Following up\"\n")
	c, err := sequence.ParseCampaign(strings.NewReader(doc.String()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sequence.ImportCampaign(ctx, f.pool, c); err != nil {
		t.Fatal(err)
	}
	f.exec(`INSERT INTO leads (workspace_id, first_name, email, timezone)
		SELECT w.id, 'Lead' || g, 'Lead' || g || '@Example.test', 'UTC' FROM workspaces w, generate_series(1, 5) g`)
	// Stored in a legacy spelling, then migrated as 00013 does.
	if err := store.RewriteAddresses(ctx, f.pool); err != nil {
		t.Fatal(err)
	}
	if _, err := sequence.Enroll(ctx, f.pool, sequence.EnrollRequest{Workspace: "acme", Campaign: "q4"}, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	mailer := sequence.NewMailer(sequence.MailerOptions{Timeout: 10 * time.Second})
	defer mailer.Close()
	if rep, err := sequence.RunTick(ctx, f.tickPool, sequence.TickOptions{Mailer: mailer}); err != nil || rep.Sent != 5 {
		t.Fatalf("email tick = %+v, %v", rep, err)
	}
	return f
}

func (f *inboxFixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.pool.Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

func (f *inboxFixture) str(sql string, args ...any) string {
	f.t.Helper()
	var s string
	if err := f.pool.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// sent is the Message-ID and mailbox of the step-1 message to lead n.
func (f *inboxFixture) sent(n int) (messageID, mailbox string) {
	f.t.Helper()
	var id, mb string
	err := f.pool.QueryRow(context.Background(), `SELECT s.message_id, m.address FROM sends s
		JOIN enrollments e ON e.id = s.enrollment_id JOIN leads l ON l.id = e.lead_id JOIN mailboxes m ON m.id = s.mailbox_id
		WHERE l.first_name = $1 AND s.step = 1`, fmt.Sprintf("Lead%d", n)).Scan(&id, &mb)
	if err != nil {
		f.t.Fatal(err)
	}
	return id, mb
}

// deliver puts testdata/file, answering lead n's step 1, in the INBOX that
// sent it, and returns the raw message.
func (f *inboxFixture) deliver(file string, n int) []byte {
	f.t.Helper()
	id, mb := f.sent(n)
	raw := fixtureMessage(f.t, file, id, id, fmt.Sprintf("Lead%d@Example.test", n))
	raw = []byte(strings.ReplaceAll(string(raw), testMailbox, mb))
	if err := f.imap.Deliver(mb, raw); err != nil {
		f.t.Fatal(err)
	}
	return raw
}

func (f *inboxFixture) status(n int) string {
	return f.str(`SELECT e.status FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.first_name = $1`, fmt.Sprintf("Lead%d", n))
}

// lookupEnv holds the mailboxes' password_env.
func lookupEnv(k string) (string, bool) {
	if k == passwordEnv {
		return password, true
	}
	return "", false
}

func (f *inboxFixture) tick(opts TickOptions) *TickReport {
	f.t.Helper()
	opts.LookupEnv = lookupEnv
	rep, err := RunTick(context.Background(), f.tickPool, opts)
	if err != nil {
		f.t.Fatalf("inbox tick: %v", err)
	}
	return rep
}

func TestInboxTickEndsRepliedAndBouncedSequences(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	f.deliver("gmail-reply.eml", 1)
	f.deliver("m365-bounce.eml", 2)
	f.deliver("m365-out-of-office.eml", 3)
	f.deliver("postfix-delayed.eml", 4)
	f.deliver("postfix-bounce.eml", 5)

	rep := f.tick(TickOptions{})
	if rep.Mailboxes != 2 || rep.Messages != 5 || rep.Outcomes[OutcomeReplied] != 1 || rep.Outcomes[OutcomeBounced] != 2 ||
		rep.Outcomes[OutcomeSuppressed] != 2 || rep.Outcomes[OutcomeAutoReply] != 1 || rep.Outcomes[OutcomeDelayed] != 1 {
		t.Fatalf("report = %+v", rep)
	}
	for n, want := range map[int]string{1: "replied", 2: "bounced", 3: "active", 4: "active", 5: "bounced"} {
		if got := f.status(n); got != want {
			t.Errorf("lead %d: enrollment %s, want %s", n, got, want)
		}
	}
	if got := f.str(`SELECT string_agg(email || '=' || reason, ',' ORDER BY email) FROM suppressions`); got != "lead2@example.test=bounced,lead5@example.test=bounced" {
		t.Errorf("suppressions = %s", got)
	}
	if got := f.str(`SELECT counts::text FROM tick_runs WHERE kind = 'inbox' AND exit_status = 0 AND claimed = 2`); !strings.Contains(got, `"replied": 1`) {
		t.Errorf("tick_runs counts = %s", got)
	}
	// The messages stay unread for the people who read that INBOX.
	unseen := 0
	for _, mb := range []string{"sdr01@acme.test", "sdr02@acme.test"} {
		n, err := f.imap.Unseen(mb)
		if err != nil {
			t.Fatal(err)
		}
		unseen += n
	}
	if unseen != 5 {
		t.Errorf("%d of 5 messages left unseen; the tick must only peek", unseen)
	}
	// A second tick starts at the checkpoints: nothing is read again.
	if rep := f.tick(TickOptions{}); rep.Messages != 0 || rep.Mailboxes != 2 {
		t.Fatalf("second tick = %+v, want both mailboxes checked and no message read", rep)
	}
}

func TestInboxTickMatchesLaterStepsAndBouncesWithoutOriginal(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	// A bounce whose report kept only the recipient (no original headers):
	// it proves nothing (issue 37) and is unmatched; the same report with
	// the original's Message-ID bounces lead 2.
	id2, mb := f.sent(2)
	for _, original := range []string{"unknown-id@elsewhere.test", id2} {
		raw := fixtureMessage(t, "postfix-bounce.eml", original, "", "Lead2@Example.test")
		if err := f.imap.Deliver(mb, []byte(strings.ReplaceAll(string(raw), testMailbox, mb))); err != nil {
			t.Fatal(err)
		}
	}
	// A reply to nothing we sent.
	_, mb3 := f.sent(3)
	if err := f.imap.Deliver(mb3, fixtureMessage(t, "postfix-reply.eml", "someone-else@example.test", "", "x@example.test")); err != nil {
		t.Fatal(err)
	}
	// Stored as an older import left it (spaces, capitals), then rewritten
	// by migration 00013: the bounce still finds it, as the claim that
	// mailed it did.
	if _, err := f.pool.Exec(context.Background(),
		`UPDATE leads SET email = '  ' || upper(email) || ' ' WHERE first_name = 'Lead2'`); err != nil {
		t.Fatal(err)
	}
	if err := store.RewriteAddresses(context.Background(), f.pool); err != nil {
		t.Fatal(err)
	}
	rep := f.tick(TickOptions{})
	if f.status(2) != "bounced" || rep.Outcomes[OutcomeUnmatched] != 2 || rep.Outcomes[OutcomeBounced] != 1 || f.status(3) != "active" {
		t.Fatalf("report %+v, lead 2 %s, lead 3 %s", rep, f.status(2), f.status(3))
	}
}

func TestInboxTickIsIdempotentAcrossUIDValidityAndBatches(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	_, mb := f.sent(1)
	var inbox [][]byte
	for n := 1; n <= 5; n++ {
		if _, m := f.sent(n); m == mb {
			inbox = append(inbox, f.deliver("postfix-reply.eml", n))
		}
	}
	// --batch bounds the messages read per mailbox; the rest wait.
	rep := f.tick(TickOptions{Batch: 1})
	if rep.Messages != 1 {
		t.Fatalf("batch 1 read %d messages", rep.Messages)
	}
	rep = f.tick(TickOptions{})
	if rep.Messages != len(inbox)-1 || rep.Outcomes[OutcomeReplied] != len(inbox)-1 {
		t.Fatalf("second tick = %+v, want the %d remaining replies", rep, len(inbox)-1)
	}
	// The server renumbers the INBOX: everything is read again, nothing changes twice.
	if err := f.imap.RenewUIDValidity(mb, inbox); err != nil {
		t.Fatal(err)
	}
	rep = f.tick(TickOptions{})
	if rep.Messages != len(inbox) || rep.Outcomes[OutcomeReplied] != 0 || rep.Outcomes[OutcomeAlreadyEnded] != len(inbox) {
		t.Fatalf("after a new UIDVALIDITY = %+v", rep)
	}
}

func TestInboxTickRecordsMailboxErrorsWithoutLeakingPasswords(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	f.deliver("gmail-reply.eml", 1)
	_, mb := f.sent(1)
	// The other mailbox's password is wrong.
	other := "sdr01@acme.test"
	if mb == other {
		other = "sdr02@acme.test"
	}
	if err := f.imap.AddAccount(other, "a-different-password"); err != nil {
		t.Fatal(err)
	}
	rep, err := RunTick(context.Background(), f.tickPool, TickOptions{LookupEnv: func(string) (string, bool) { return password, true }})
	if err == nil || !strings.Contains(err.Error(), other) || strings.Contains(err.Error(), password) {
		t.Fatalf("error = %v, want one naming %s without the password", err, other)
	}
	if rep.Outcomes[OutcomeReplied] != 1 || rep.Outcomes[OutcomeMailboxError] != 1 {
		t.Errorf("report = %+v: the readable mailbox must still be read", rep)
	}
	if got := f.str(`SELECT coalesce(c.last_error, '') FROM inbox_checkpoints c JOIN mailboxes m ON m.id = c.mailbox_id WHERE m.address = $1`, other); !strings.Contains(got, "login") {
		t.Errorf("checkpoint last_error = %q", got)
	}
	if got := f.str(`SELECT exit_status::text FROM tick_runs WHERE kind = 'inbox'`); got != "1" {
		t.Errorf("tick_runs exit_status = %s, want 1", got)
	}
	// Without the variable, the error names it.
	_, err = RunTick(context.Background(), f.tickPool, TickOptions{})
	if err == nil || !strings.Contains(err.Error(), passwordEnv) {
		t.Errorf("missing password_env error = %v", err)
	}
}

// Told to stop in the middle of a mailbox (SIGTERM), the tick records what
// it did, releases the mailbox and exits 0: a stop is not a failure.
func TestInboxTickStopsCleanly(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	f.deliver("gmail-reply.eml", 1)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	rep, err := RunTick(ctx, f.tickPool, TickOptions{LookupEnv: func(string) (string, bool) {
		stop() // the signal arrives as the first mailbox is opened
		return password, true
	}})
	if err != nil || rep.Outcomes[OutcomeMailboxError] != 0 {
		t.Fatalf("stopped tick = %+v, %v; want a clean stop", rep, err)
	}
	if got := f.str(`SELECT count(*)::text FROM inbox_checkpoints WHERE locked_by IS NOT NULL OR last_error IS NOT NULL`); got != "0" {
		t.Errorf("%s mailboxes left leased or in error", got)
	}
	if got := f.str(`SELECT exit_status::text FROM tick_runs WHERE kind = 'inbox'`); got != "0" {
		t.Errorf("tick_runs exit_status = %s, want 0", got)
	}
	// The next tick reads what was left.
	if rep := f.tick(TickOptions{}); rep.Outcomes[OutcomeReplied] != 1 {
		t.Errorf("next tick = %+v, want the reply read", rep)
	}
}

// Issue 29: a session the tick's own deadline (--max-duration plus the
// session grace) cuts is not the mailbox's failure: no last_error, no
// mailbox_error, exit 0; the next tick reads on from the checkpoint.
// Before the fix the session ran 25 s past its end (go-imap sets its own
// read deadline on every reply, replacing the session's), and with only
// the end enforced the cut was the mailbox's error ("login: unexpected
// EOF", mailbox_error, exit 1).
func TestInboxTickCutByItsDeadlineIsNoMailboxError(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	for n := 1; n <= 5; n++ {
		f.deliver("gmail-reply.eml", n)
	}
	// Every mailbox behind a link so slow that not even the greeting
	// arrives before the session's end.
	addr := strings.TrimPrefix(f.imap.URL("x"), "imap://x@")
	slow := testkit.SlowProxy(t, addr, 5*time.Second)
	f.exec(`UPDATE mailboxes SET imap_url = replace(imap_url, $1, $2)`, addr, slow)
	start := time.Now()
	// A deadline a loaded machine's start-up cannot outlast before the
	// first mailbox is leased (at 1 s it could visit none); the greeting,
	// 5 s after the connection, still never arrives before the session's end.
	rep, err := RunTick(context.Background(), f.tickPool, TickOptions{LookupEnv: lookupEnv, MaxDuration: 2 * time.Second, Lease: 3 * time.Second})
	// The slow link needs 25 s for the session; it must end near 2.4 s.
	// Bounded by what must never happen, not a margin that moves with load.
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the tick held a session for %s past its end (2.4 s): it waited for the slow link", took)
	}
	if err != nil || rep.Mailboxes == 0 || rep.Messages != 0 || rep.Outcomes[OutcomeMailboxError] != 0 {
		t.Fatalf("tick cut by its deadline = %+v, %v; want a mailbox visited, its session cut before any message, and a clean stop", rep, err)
	}
	if got := f.str(`SELECT count(*)::text FROM inbox_checkpoints WHERE locked_by IS NOT NULL OR last_error IS NOT NULL`); got != "0" {
		t.Errorf("%s mailboxes left leased or in error", got)
	}
	if got := f.str(`SELECT exit_status::text FROM tick_runs WHERE kind = 'inbox'`); got != "0" {
		t.Errorf("tick_runs exit_status = %s, want 0", got)
	}
	// Back on a fast link, the next tick reads what was left.
	f.exec(`UPDATE mailboxes SET imap_url = replace(imap_url, $1, $2)`, slow, addr)
	if rep := f.tick(TickOptions{}); rep.Outcomes[OutcomeReplied] != 5 {
		t.Errorf("next tick = %+v, want the 5 replies read", rep)
	}
}

// Ticks started together split the mailboxes: each message is read once.
func TestInboxTicksInParallelSplitMailboxes(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	for n := 1; n <= 5; n++ {
		f.deliver("postfix-reply.eml", n)
	}
	type result struct {
		rep *TickReport
		err error
	}
	results := make(chan result, 3)
	for range 3 {
		go func() {
			rep, err := RunTick(context.Background(), f.tickPool, TickOptions{LookupEnv: lookupEnv})
			results <- result{rep, err}
		}()
	}
	mailboxes, messages, replied := 0, 0, 0
	for range 3 {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		mailboxes, messages, replied = mailboxes+r.rep.Mailboxes, messages+r.rep.Messages, replied+r.rep.Outcomes[OutcomeReplied]
	}
	// A tick that found a mailbox already read by another reads it again
	// only past the other's checkpoint: nothing twice.
	if messages != 5 || replied != 5 {
		t.Fatalf("three parallel ticks read %d messages over %d mailbox visits and ended %d sequences; want 5 and 5", messages, mailboxes, replied)
	}
}
