package sequence

import (
	"bytes"
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
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The OAuth acceptance against real servers (issue 38): the email tick
// sends through Postfix submission, authenticated by Dovecot SASL with
// XOAUTH2, Dovecot's oauth2 passdb checking the token at the stand-in's
// introspection endpoint; the messages land in the maildir Postfix
// delivers to and the sends are recorded sent.
func TestEmailTickSendsThroughRealPostfixWithXOAUTH2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	idp := oauthtest.New(t)
	dc := dovecottest.New(t, idp.IntrospectURL())
	pf := dc.Submission(t, "example.test")
	db := storetest.New(t)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	key, err := secrets.ParseMasterKey("test", base64.StdEncoding.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}
	const addr = "sdr01@acme.test"
	doc := fmt.Sprintf("workspace: acme\nname: q4\nmailboxes:\n  - address: %s\n    smtp_url: %s\n    auth: {method: oauth2, provider: generic, client_id_env: CLIENT_ID, auth_url: %q, token_url: %q, scopes: [mail]}\n"+
		"steps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"Hello\"\n  - delay: 72h\n    body: \"Following up\"\n", addr, pf.URL(), idp.AuthURL(), idp.TokenURL())
	c, err := ParseCampaign(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ImportCampaign(ctx, db.Pool, c); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, pool: db.Pool}
	id := int64(f.count(`SELECT id FROM mailboxes WHERE address = $1`, addr))
	if err := secrets.StoreMailboxGrant(ctx, db.Pool, key, id, addr, idp.Grant(addr, "mail"), "", time.Time{}, "test"); err != nil {
		t.Fatal(err)
	}
	f.exec(`INSERT INTO leads (workspace_id, external_id, first_name, company, email, timezone)
		SELECT w.id, 'ext-' || g, 'First' || g, 'Co' || g, 'lead' || g || '@example.test', 'UTC'
		FROM workspaces w, generate_series(1, 2) g WHERE w.name = 'acme'`)
	if _, err := Enroll(ctx, db.Pool, EnrollRequest{Workspace: "acme", Campaign: "q4"}, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}

	lookup := func(k string) (string, bool) { return idp.ClientID, k == "CLIENT_ID" }
	tickPool := db.TickPool(t)
	tokens := mailauth.NewTokens(tickPool, key, mailauth.Options{LookupEnv: lookup})
	mailer := NewMailer(MailerOptions{Timeout: 30 * time.Second, LookupEnv: lookup, Tokens: tokens})
	defer mailer.Close()
	rep, err := RunTick(ctx, tickPool, TickOptions{Mailer: mailer})
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, pf.Log(), dc.Log())
	}
	if rep.Outcomes[OutcomeSent] != 2 {
		t.Fatalf("outcomes %v, want 2 sent through Postfix\n%s\n%s", rep.Outcomes, pf.Log(), dc.Log())
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE status = 'sent'`); n != 2 {
		t.Fatalf("%d sends recorded sent, want 2", n)
	}
	if !strings.Contains(pf.Log(), "sasl_method=XOAUTH2, sasl_username="+addr) {
		t.Fatalf("postfix logged no XOAUTH2 authentication of %s:\n%s", addr, pf.Log())
	}
	// Postfix delivers after it has accepted: wait for the queue manager,
	// bounded by the delivery itself (it either lands or Postfix logs why).
	var msgs [][]byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if msgs, err = pf.Delivered(); err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 2 {
			break
		}
	}
	if len(msgs) != 2 {
		t.Fatalf("%d messages delivered, want 2\n%s", len(msgs), pf.Log())
	}
	for _, m := range msgs {
		if !bytes.Contains(m, []byte("From: ")) || !bytes.Contains(m, []byte(addr)) {
			t.Fatalf("delivered message not from %s:\n%s", addr, m)
		}
	}
}
