package inbox

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/mailauth/oauthtest"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/sequence"
)

// oauth2 mailboxes are read over IMAP with AUTHENTICATE XOAUTH2 against a
// server that refuses LOGIN and checks each token at the OAuth stand-in.
func TestInboxTickReadsOAuthMailboxesWithXOAUTH2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, idp, key := oauthInboxFixture(t)
	f.deliver("gmail-reply.eml", 1)

	lookup := func(k string) (string, bool) { return idp.ClientID, k == "CLIENT_ID" }
	rep, err := RunTick(ctx, f.tickPool, TickOptions{LookupEnv: lookup, Tokens: mailauth.NewTokens(f.tickPool, key, mailauth.Options{LookupEnv: lookup})})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mailboxes != 2 || rep.Outcomes[OutcomeReplied] != 1 || rep.Outcomes[OutcomeMailboxError] != 0 {
		t.Fatalf("report = %+v, want both mailboxes read over XOAUTH2 and the reply found", rep)
	}
	if got := f.status(1); got != "replied" {
		t.Fatalf("lead 1: %s, want replied", got)
	}

	// sdr02's grant is revoked and the tokens expire: the inbox tick
	// pauses sdr02 with one mailbox_auth_revoked event naming `rindactl
	// mailbox authorize`, reads sdr01 on, and does not fail (issue 38:
	// before, every firing exited 1 with the mailbox unpaused).
	idp.Revoke("sdr02@acme.test")
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	for range 2 {
		rep, err = RunTick(ctx, f.tickPool, TickOptions{LookupEnv: lookup, Tokens: mailauth.NewTokens(f.tickPool, key, mailauth.Options{LookupEnv: lookup, Now: later})})
		if err != nil {
			t.Fatalf("tick after the revocation: %v", err)
		}
		if rep.Mailboxes != 2 || rep.Outcomes[OutcomeMailboxPaused] != 1 || rep.Outcomes[OutcomeMailboxError] != 0 {
			t.Fatalf("report = %+v, want sdr02 paused for its grant and sdr01 read", rep)
		}
	}
	var events int
	var reason string
	if err := f.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM events WHERE kind = 'mailbox_auth_revoked'), coalesce(pause_reason, '')
		FROM mailboxes WHERE address = 'sdr02@acme.test' AND paused_until > now()`).Scan(&events, &reason); err != nil {
		t.Fatalf("sdr02 not paused: %v", err)
	}
	if events != 1 || !strings.Contains(reason, "rindactl mailbox authorize sdr02@acme.test") {
		t.Fatalf("%d mailbox_auth_revoked events, pause reason %q: want one for the episode, naming the authorize command", events, reason)
	}
	var paused int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM mailboxes WHERE paused_until > now()`).Scan(&paused); err != nil || paused != 1 {
		t.Fatalf("%d mailboxes paused (%v), want only sdr02", paused, err)
	}
}

// oauthInboxFixture is the inbox fixture with both mailboxes on oauth2 at
// the stand-in, granted, and an IMAP server that takes only XOAUTH2 tokens
// the stand-in says are active.
func oauthInboxFixture(t *testing.T) (*inboxFixture, *oauthtest.Server, secrets.MasterKey) {
	t.Helper()
	ctx := context.Background()
	f := newInboxFixture(t)
	idp := oauthtest.New(t)
	f.imap.SetBearer(idp.Valid)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	key, err := secrets.ParseMasterKey("test", base64.StdEncoding.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}
	// The same campaign, its mailboxes now on oauth2.
	var doc strings.Builder
	doc.WriteString("workspace: acme\nname: q4\nmailboxes:\n")
	for _, mb := range []string{"sdr01@acme.test", "sdr02@acme.test"} {
		fmt.Fprintf(&doc, "  - address: %s\n    smtp_url: %s\n    imap_url: %s\n    auth: {method: oauth2, provider: generic, client_id_env: CLIENT_ID, auth_url: %q, token_url: %q, scopes: [mail]}\n",
			mb, f.smtp.URL(""), f.imap.URL(mb), idp.AuthURL(), idp.TokenURL())
		var id int64
		if err := f.pool.QueryRow(ctx, `SELECT id FROM mailboxes WHERE address = $1`, mb).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if err := secrets.StoreMailboxGrant(ctx, f.pool, key, id, mb, idp.Grant(mb, "mail"), "", time.Time{}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	doc.WriteString("steps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"Hello {{.FirstName}}\"\n  - delay: 72h\n    body: \"Following up\"\n")
	c, err := sequence.ParseCampaign(strings.NewReader(doc.String()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sequence.ImportCampaign(ctx, f.pool, c); err != nil {
		t.Fatal(err)
	}
	return f, idp, key
}

// A server that refuses an access token before its expiry (the grant was
// revoked, or the provider retired the token early) sends Gmail's error
// challenge; the tick answers it so that the server says NO (go-imap's
// empty answer "=" got BAD from Dovecot), forgets that token and logs in
// once more with a refreshed one: a retired token costs nothing, a revoked
// grant pauses its mailbox as an expired token would. Before, both were a
// plain mailbox_error on every firing.
func TestInboxTickRefreshesATokenTheServerRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, idp, key := oauthInboxFixture(t)
	f.deliver("gmail-reply.eml", 1)
	lookup := func(k string) (string, bool) { return idp.ClientID, k == "CLIENT_ID" }
	run := func() (*TickReport, error) {
		return RunTick(ctx, f.tickPool, TickOptions{LookupEnv: lookup, Tokens: mailauth.NewTokens(f.tickPool, key, mailauth.Options{LookupEnv: lookup})})
	}
	tick := func() *TickReport {
		t.Helper()
		rep, err := run()
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := tick(); rep.Outcomes[OutcomeMailboxError] != 0 {
		t.Fatalf("first tick = %+v", rep)
	}
	requests := idp.TokenRequests("sdr01@acme.test")

	// sdr01's cached token is retired (its grant stands), sdr02's grant
	// is revoked; neither cached token has expired.
	idp.RetireAccess("sdr01@acme.test")
	idp.Revoke("sdr02@acme.test")
	rep := tick()
	if rep.Mailboxes != 2 || rep.Outcomes[OutcomeMailboxError] != 0 || rep.Outcomes[OutcomeMailboxPaused] != 1 {
		t.Fatalf("report = %+v, want sdr01 read with a refreshed token and sdr02 paused for its grant", rep)
	}
	if got := idp.TokenRequests("sdr01@acme.test") - requests; got != 1 {
		t.Errorf("sdr01 refreshed %d times, want once", got)
	}
	var paused []string
	rows, err := f.pool.Query(ctx, `SELECT address FROM mailboxes WHERE paused_until > now() AND pause_reason LIKE '%rindactl mailbox authorize%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a string
		_ = rows.Scan(&a)
		paused = append(paused, a)
	}
	if rows.Err() != nil || len(paused) != 1 || paused[0] != "sdr02@acme.test" {
		t.Fatalf("paused for their grant: %v (%v), want only sdr02", paused, rows.Err())
	}
	// A refused fresh token is the mailbox's fault, reported once per
	// tick: no second refresh within the tick.
	f.imap.SetBearer(func(string, string) bool { return false })
	requests = idp.TokenRequests("sdr01@acme.test")
	if rep, err := run(); err == nil || rep.Outcomes[OutcomeMailboxError] != 1 || !strings.Contains(err.Error(), "AUTHENTICATIONFAILED") {
		t.Fatalf("report = %+v, error %v: want sdr01 failed with the server's NO", rep, err)
	}
	if got := idp.TokenRequests("sdr01@acme.test") - requests; got != 1 {
		t.Errorf("sdr01 refreshed %d times in a tick whose server refuses every token, want once", got)
	}
}

// A server that offers OAUTHBEARER (RFC 7628) and not XOAUTH2 gets
// OAUTHBEARER; a token it refuses ends in its NO (the error challenge
// answered with ^A), not in a command left open until the deadline.
func TestInboxTickSignsInWithOAUTHBEARERWhereOnlyThatIsOffered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, idp, key := oauthInboxFixture(t)
	f.imap.SetBearerMechanisms("OAUTHBEARER")
	f.deliver("gmail-reply.eml", 1)
	lookup := func(k string) (string, bool) { return idp.ClientID, k == "CLIENT_ID" }
	run := func() (*TickReport, error) {
		return RunTick(ctx, f.tickPool, TickOptions{LookupEnv: lookup, Tokens: mailauth.NewTokens(f.tickPool, key, mailauth.Options{LookupEnv: lookup})})
	}
	rep, err := run()
	if err != nil || rep.Mailboxes != 2 || rep.Outcomes[OutcomeReplied] != 1 {
		t.Fatalf("report = %+v, error %v: want both mailboxes read over OAUTHBEARER and the reply found", rep, err)
	}
	// The server's NO in the error is what says the command was completed.
	f.imap.SetBearer(func(string, string) bool { return false })
	rep, err = run()
	if err == nil || rep.Outcomes[OutcomeMailboxError] != 2 || !strings.Contains(err.Error(), "NO") {
		t.Fatalf("report = %+v, error %v: want both mailboxes failed with the server's NO", rep, err)
	}
}
