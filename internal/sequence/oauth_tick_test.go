package sequence

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"

	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/mailauth/oauthtest"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Three oauth2 mailboxes send through an SMTP server that takes only
// XOAUTH2 and checks each token at the OAuth stand-in. Then one grant is
// revoked and the tokens expire: that mailbox pauses with one
// mailbox_auth_revoked event for the whole episode (however many ticks
// meet it), the others keep sending, and its leads are charged no attempt.
func TestOAuthMailboxesSendAndRevokedGrantPausesOnlyItsMailbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	idp := oauthtest.New(t)
	srv := smtptest.New(t, smtptest.Options{Bearer: idp.Valid})
	f, key := oauthSendFixture(t, db, idp, srv.URL(""))
	// The tokens' clock: moved past the one-hour tokens to expire them.
	var later atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(later.Load())) }
	lookup := func(k string) (string, bool) { return idp.ClientID, k == "CLIENT_ID" }
	tickPool := db.TickPool(t)
	tick := func() *TickReport {
		t.Helper()
		tokens := mailauth.NewTokens(tickPool, key, mailauth.Options{LookupEnv: lookup, Now: now})
		mailer := NewMailer(MailerOptions{Timeout: 10 * time.Second, LookupEnv: lookup, Tokens: tokens})
		defer mailer.Close()
		rep, err := RunTick(ctx, tickPool, TickOptions{Mailer: mailer})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	rep := tick()
	if rep.Outcomes[OutcomeSent] != 12 || len(srv.Messages()) != 12 {
		t.Fatalf("first tick: %v, %d messages at the server, want 12 sent over XOAUTH2", rep.Outcomes, len(srv.Messages()))
	}
	for _, m := range srv.Messages() {
		if m.Username != m.From {
			t.Fatalf("message from %s signed in as %q", m.From, m.Username)
		}
	}

	// Before the cached tokens expire, the server refuses two of them:
	// sdr01's was retired early (a password change: its grant stands) and
	// sdr02's grant was revoked. Each gets one refresh: sdr01 sends with
	// the new token, sdr02's refresh gets invalid_grant and it pauses.
	// Before, both paused as a failed login, sdr01 until its token expired.
	idp.RetireAccess("sdr01@acme.test")
	idp.Revoke("sdr02@acme.test")
	asked := map[string]int{}
	for _, mb := range []string{"sdr01@acme.test", "sdr03@acme.test"} {
		asked[mb] = idp.TokenRequests(mb)
	}
	f.due()
	const ofSdr02 = `FROM enrollments e JOIN mailboxes m ON m.id = e.mailbox_id WHERE m.address = 'sdr02@acme.test'`
	n2 := f.count(`SELECT count(*) ` + ofSdr02)
	sent := len(srv.Messages())
	rep = tick()
	if rep.Outcomes[OutcomeMailboxPaused] != 1 || len(srv.Messages())-sent != 12-n2 {
		t.Fatalf("after the revocation: %v, %d sent, want sdr02 paused and the other %d follow-ups sent", rep.Outcomes, len(srv.Messages())-sent, 12-n2)
	}
	for mb, want := range map[string]int{"sdr01@acme.test": 1, "sdr03@acme.test": 0} {
		if got := idp.TokenRequests(mb) - asked[mb]; got != want {
			t.Errorf("%s refreshed %d times, want %d", mb, got, want)
		}
	}
	// Later ticks run after the tokens' hour.
	later.Store(int64(2 * time.Hour))
	// The hourly pause ends and the next tick meets the same episode.
	f.exec(`UPDATE mailboxes SET paused_until = now() - interval '1 second' WHERE address = 'sdr02@acme.test'`)
	f.due()
	tick()
	if n := f.count(`SELECT count(*) FROM events WHERE kind = 'mailbox_auth_revoked'`); n != 1 {
		t.Fatalf("%d mailbox_auth_revoked events, want 1 for the episode", n)
	}
	if n := f.count(`SELECT count(*) FROM events WHERE kind = 'mailbox_paused'`); n != 0 {
		t.Fatalf("%d mailbox_paused events beside the episode's own", n)
	}
	// One request for the first token, one refused: the third tick reads
	// the episode from the row.
	if n := idp.TokenRequests("sdr02@acme.test"); n != 2 {
		t.Fatalf("sdr02's grant was asked %d times, want 2 (first token, then the refusal)", n)
	}
	if n := f.count(`SELECT count(*) ` + ofSdr02 + ` AND e.status = 'active' AND e.attempts = 0`); n != n2 || n2 == 0 {
		t.Fatalf("%d of sdr02's %d follow-ups wait with no attempt charged", n, n2)
	}
	var reason string
	if err := db.Pool.QueryRow(ctx, `SELECT pause_reason FROM mailboxes WHERE address = 'sdr02@acme.test'`).Scan(&reason); err != nil ||
		!strings.Contains(reason, "rindactl mailbox authorize sdr02@acme.test") {
		t.Fatalf("pause reason %q (%v), want it to name 'rindactl mailbox authorize'", reason, err)
	}

	var stored string
	if err := db.Pool.QueryRow(ctx, `SELECT coalesce(string_agg(payload::text, ' '), '') || (SELECT string_agg(coalesce(pause_reason, ''), ' ') FROM mailboxes)
		|| (SELECT coalesce(string_agg(coalesce(last_error, ''), ' '), '') FROM enrollments) FROM events`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`\b(at|rt)-[0-9a-f]{36}\b`).MatchString(stored) {
		t.Fatalf("a token reached an event, a pause reason or a row's error: %s", stored)
	}

	// A new grant (what `mailbox authorize` stores) ends the pause at once
	// and the waiting follow-ups go out.
	id2 := int64(f.count(`SELECT id FROM mailboxes WHERE address = 'sdr02@acme.test'`))
	if err := secrets.StoreMailboxGrant(ctx, db.Pool, key, id2, "sdr02@acme.test", idp.Grant("sdr02@acme.test", "mail"), "", time.Time{}, "test"); err != nil {
		t.Fatal(err)
	}
	if n := f.count(`SELECT count(*) FROM mailboxes WHERE address = 'sdr02@acme.test' AND paused_until IS NULL`); n != 1 {
		t.Fatal("the new grant left the revoked-grant pause in place")
	}
	f.due()
	sent = len(srv.Messages())
	tick()
	if got := len(srv.Messages()) - sent; got != n2 {
		t.Fatalf("%d messages after the new grant, want sdr02's %d follow-ups", got, n2)
	}
}

// oauthSendFixture imports campaign q4 with three oauth2 mailboxes sending
// through smtpURL, stores each one's grant at idp and enrolls 12 leads due
// now.
func oauthSendFixture(t *testing.T, db *storetest.DB, idp *oauthtest.Server, smtpURL string) (*fixture, secrets.MasterKey) {
	t.Helper()
	ctx := context.Background()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	key, err := secrets.ParseMasterKey("test", base64.StdEncoding.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}

	var doc strings.Builder
	doc.WriteString("workspace: acme\nname: q4\nmailboxes:\n")
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&doc, "  - address: sdr%02d@acme.test\n    smtp_url: %s\n    auth: {method: oauth2, provider: generic, client_id_env: CLIENT_ID, auth_url: %q, token_url: %q, scopes: [mail]}\n",
			i, smtpURL, idp.AuthURL(), idp.TokenURL())
	}
	doc.WriteString("steps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"Hello\"\n  - delay: 72h\n    body: \"Following up\"\n")
	c, err := ParseCampaign(strings.NewReader(doc.String()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ImportCampaign(ctx, db.Pool, c); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, pool: db.Pool}
	for i := 1; i <= 3; i++ {
		addr := fmt.Sprintf("sdr%02d@acme.test", i)
		id := int64(f.count(`SELECT id FROM mailboxes WHERE address = $1`, addr))
		if err := secrets.StoreMailboxGrant(ctx, db.Pool, key, id, addr, idp.Grant(addr, "mail"), "", time.Time{}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	f.exec(`INSERT INTO leads (workspace_id, external_id, first_name, company, email, timezone)
		SELECT w.id, 'ext-' || g, 'First' || g, 'Co' || g, 'lead' || g || '@example.test', 'UTC'
		FROM workspaces w, generate_series(1, 12) g WHERE w.name = 'acme'`)
	if _, err := Enroll(ctx, db.Pool, EnrollRequest{Workspace: "acme", Campaign: "q4"}, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}

	return f, key
}

// A server that offers OAUTHBEARER (RFC 7628) and not XOAUTH2 gets
// OAUTHBEARER (go-mail has XOAUTH2 only), and a token it refuses before
// its expiry is refreshed once, as with XOAUTH2.
func TestOAuthMailboxesSendWithOAUTHBEARERWhereOnlyThatIsOffered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	idp := oauthtest.New(t)
	srv := smtptest.New(t, smtptest.Options{Bearer: idp.Valid, BearerMechanisms: []string{sasl.OAuthBearer}})
	f, key := oauthSendFixture(t, db, idp, srv.URL(""))
	lookup := func(k string) (string, bool) { return idp.ClientID, k == "CLIENT_ID" }
	tickPool := db.TickPool(t)
	tick := func() *TickReport {
		t.Helper()
		mailer := NewMailer(MailerOptions{Timeout: 10 * time.Second, LookupEnv: lookup, Tokens: mailauth.NewTokens(tickPool, key, mailauth.Options{LookupEnv: lookup})})
		defer mailer.Close()
		rep, err := RunTick(ctx, tickPool, TickOptions{Mailer: mailer})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := tick(); rep.Outcomes[OutcomeSent] != 12 || len(srv.Messages()) != 12 {
		t.Fatalf("first tick: %v, %d messages at the server, want 12 sent over OAUTHBEARER", rep.Outcomes, len(srv.Messages()))
	}
	idp.RetireAccess("sdr01@acme.test")
	asked := idp.TokenRequests("sdr01@acme.test")
	f.due()
	if rep := tick(); len(srv.Messages()) != 24 || rep.Outcomes[OutcomeMailboxPaused] != 0 {
		t.Fatalf("after sdr01's token was retired: %v, %d messages at the server, want the 12 follow-ups sent", rep.Outcomes, len(srv.Messages()))
	}
	if got := idp.TokenRequests("sdr01@acme.test") - asked; got != 1 {
		t.Errorf("sdr01 refreshed %d times, want once", got)
	}
}

// `mailbox test` and `doctor --mailboxes` probe as the ticks send: a
// cached access token the server refuses before its expiry is refreshed
// once and the login tried again, so a token retired early (its grant
// standing) probes ok, and a revoked grant fails as revoked, not as the
// server's refusal of a token the next tick would not use.
func TestProbeRefreshesARefusedCachedToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	idp := oauthtest.New(t)
	srv := smtptest.New(t, smtptest.Options{Bearer: idp.Valid})
	f, key := oauthSendFixture(t, db, idp, srv.URL(""))
	lookup := func(k string) (string, bool) { return idp.ClientID, k == "CLIENT_ID" }
	tokens := mailauth.NewTokens(db.Pool, key, mailauth.Options{LookupEnv: lookup})
	mailer := NewMailer(MailerOptions{Timeout: 10 * time.Second, LookupEnv: lookup, Tokens: tokens})
	defer mailer.Close()
	mailbox := func(addr string) Mailbox {
		t.Helper()
		recs, err := store.Mailboxes(ctx, db.Pool, []int64{int64(f.count(`SELECT id FROM mailboxes WHERE address = $1`, addr))})
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %v", addr, err)
		}
		mb, err := MailboxFromRecord(recs[0])
		if err != nil {
			t.Fatal(err)
		}
		return mb
	}
	probe := func(addr string) error {
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		return mailer.Probe(pctx, mailbox(addr))
	}
	// The first probes cache each mailbox's token.
	for _, addr := range []string{"sdr01@acme.test", "sdr02@acme.test"} {
		if err := probe(addr); err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
	}
	idp.RetireAccess("sdr01@acme.test")
	idp.Revoke("sdr02@acme.test")
	asked := idp.TokenRequests("sdr01@acme.test")
	if err := probe("sdr01@acme.test"); err != nil {
		t.Fatalf("sdr01, its cached token retired early, its grant standing: %v, want the probe to refresh and log in", err)
	}
	if n := idp.TokenRequests("sdr01@acme.test") - asked; n != 1 {
		t.Fatalf("sdr01 refreshed %d times, want 1", n)
	}
	err := probe("sdr02@acme.test")
	var le *LoginError
	if !errors.As(err, &le) || le.Stage != LoginStageOAuth || !strings.Contains(err.Error(), "invalid_grant") ||
		!strings.Contains(err.Error(), "rindactl mailbox authorize sdr02@acme.test") {
		t.Fatalf("sdr02, its grant revoked: %v, want the oauth stage naming invalid_grant and the authorize command", err)
	}
	if len(srv.Messages()) != 0 {
		t.Fatalf("the probes sent %d messages", len(srv.Messages()))
	}
}
