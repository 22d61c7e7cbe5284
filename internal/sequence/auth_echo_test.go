package sequence

import (
	"context"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/redact/redacttest"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// Issue 25, finding 5: a server whose 535 repeats the password (the AUTH
// PLAIN blob, the password literal, URL-encoded and JSON-escaped) leaves
// it nowhere: not in the error Send returns, sends.error,
// enrollments.last_error, mailboxes.pause_reason, the mailbox_paused
// event (its reason carries the reply) or the tick's log lines (logged with a plain handler, no safety
// net). Issue 37, finding 5: nor when the reply spells it with %20, every
// byte percent-encoded in either hex case, as JSON \uXXXX, as HTML
// references, quoted-printable or base64url; each place is read back with
// the standard library's decoders (redacttest.Leaks), not the redactor's.
func TestAuthReplyEchoingThePasswordLeavesItNowhere(t *testing.T) {
	t.Parallel()
	const password = "pa/ss+wo=rd Échö&4711"
	f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 1, steps: oneStep})
	raw := smtptest.NewRaw(t, smtptest.RawOptions{AuthEcho: true})
	f.pointMailbox("sdr01@acme.test", strings.Replace(raw.URL(), "smtp://", "smtp://sdr01@", 1))
	f.exec(`UPDATE mailboxes SET password_env = 'RINDA_TEST_PW_ECHO' WHERE address = 'sdr01@acme.test'`)
	f.mailer = NewMailer(MailerOptions{LookupEnv: func(string) (string, bool) { return password, true }})
	var logs strings.Builder
	rep := f.tick(TickOptions{Logger: jsonLogger(&logs)})
	if rep.Outcomes[OutcomeMailboxPaused] != 1 || raw.Auths() == 0 {
		t.Fatalf("tick = %+v (%d AUTH), want the mailbox paused by the 535", rep, raw.Auths())
	}
	stored := map[string]string{"logs": logs.String()}
	for what, sql := range map[string]string{
		"sends.error":            `SELECT string_agg(coalesce(error, ''), ' ') FROM sends`,
		"enrollments.last_error": `SELECT string_agg(coalesce(last_error, ''), ' ') FROM enrollments`,
		"mailboxes.pause_reason": `SELECT string_agg(coalesce(pause_reason, ''), ' ') FROM mailboxes`,
		"events":                 `SELECT string_agg(payload::text, ' ') FROM events`,
	} {
		var s *string
		if err := f.pool.QueryRow(context.Background(), sql).Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s != nil {
			stored[what] = *s
		}
	}
	if !strings.Contains(stored["mailboxes.pause_reason"], "535") {
		t.Errorf("pause_reason %q does not keep the server's reply", stored["mailboxes.pause_reason"])
	}
	for what, text := range stored {
		if enc := redacttest.Leaks(text, password); enc != "" {
			t.Errorf("the password appears in %s, spelled %s: %s", what, enc, text)
		}
	}
}
