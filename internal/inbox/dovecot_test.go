package inbox

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/inbox/dovecottest"
	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/mailauth/oauthtest"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/sequence"
)

// The OAuth acceptance against a real server (issue 38): Dovecot's oauth2
// passdb checks each XOAUTH2 token at the stand-in's introspection
// endpoint. The inbox tick reads the reply there and ends the sequence;
// once the grant is revoked (introspection says active:false and the
// refresh is refused), it pauses only that mailbox.
func TestInboxTickReadsRealDovecotWithXOAUTH2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	idp := oauthtest.New(t)
	dc := dovecottest.New(t, idp.IntrospectURL())
	f := newInboxFixture(t)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	key, err := secrets.ParseMasterKey("test", base64.StdEncoding.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}
	// The same campaign, its mailboxes now on oauth2 at Dovecot.
	var doc strings.Builder
	doc.WriteString("workspace: acme\nname: q4\nmailboxes:\n")
	for _, mb := range []string{"sdr01@acme.test", "sdr02@acme.test"} {
		fmt.Fprintf(&doc, "  - address: %s\n    smtp_url: %s\n    imap_url: %s\n    auth: {method: oauth2, provider: generic, client_id_env: CLIENT_ID, auth_url: %q, token_url: %q, scopes: [mail]}\n",
			mb, f.smtp.URL(""), dc.URL(mb), idp.AuthURL(), idp.TokenURL())
		var id int64
		if err := f.pool.QueryRow(ctx, `SELECT id FROM mailboxes WHERE address = $1`, mb).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if err := secrets.StoreMailboxGrant(ctx, f.pool, key, id, mb, idp.Grant(mb, "mail"), "", time.Time{}, "test"); err != nil {
			t.Fatal(err)
		}
		// An empty INBOX, so that the mailbox without a reply is read too.
		if err := dc.Deliver(mb, []byte("From: someone@else.test\r\nTo: "+mb+"\r\nSubject: unrelated\r\nMessage-ID: <unrelated-"+mb+">\r\n\r\nnot a reply\r\n")); err != nil {
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
	id, mb := f.sent(1)
	raw := fixtureMessage(t, "gmail-reply.eml", id, id, "Lead1@Example.test")
	if err := dc.Deliver(mb, []byte(strings.ReplaceAll(string(raw), testMailbox, mb))); err != nil {
		t.Fatal(err)
	}

	lookup := func(k string) (string, bool) { return idp.ClientID, k == "CLIENT_ID" }
	rep, err := RunTick(ctx, f.tickPool, TickOptions{LookupEnv: lookup, Tokens: mailauth.NewTokens(f.tickPool, key, mailauth.Options{LookupEnv: lookup})})
	if err != nil {
		t.Fatalf("%v\ndovecot log:\n%s", err, dc.Log())
	}
	if rep.Mailboxes != 2 || rep.Outcomes[OutcomeReplied] != 1 || rep.Outcomes[OutcomeMailboxError] != 0 {
		t.Fatalf("report = %+v, want both mailboxes read over XOAUTH2 and the reply found\ndovecot log:\n%s", rep, dc.Log())
	}
	if got := f.status(1); got != "replied" {
		t.Fatalf("lead 1: %s, want replied", got)
	}
	for _, mb := range []string{"sdr01@acme.test", "sdr02@acme.test"} {
		if !strings.Contains(dc.Log(), "Login: user=<"+mb+">, method=XOAUTH2") {
			t.Fatalf("dovecot logged no XOAUTH2 login of %s:\n%s", mb, dc.Log())
		}
	}

	// sdr02's grant is revoked while its cached access token has not
	// expired: Dovecot refuses the token (introspection: active:false)
	// with an XOAUTH2 error challenge, the tick's answer gets Dovecot's NO
	// (an empty one got BAD), the tick refreshes, the refresh gets
	// invalid_grant, and only sdr02 is paused.
	idp.Revoke("sdr02@acme.test")
	rep, err = RunTick(ctx, f.tickPool, TickOptions{LookupEnv: lookup, Tokens: mailauth.NewTokens(f.tickPool, key, mailauth.Options{LookupEnv: lookup})})
	if err != nil {
		t.Fatalf("tick after the revocation: %v", err)
	}
	if rep.Mailboxes != 2 || rep.Outcomes[OutcomeMailboxPaused] != 1 || rep.Outcomes[OutcomeMailboxError] != 0 {
		t.Fatalf("report = %+v, want sdr02 paused for its grant and sdr01 read\ndovecot log:\n%s", rep, dc.Log())
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
}
