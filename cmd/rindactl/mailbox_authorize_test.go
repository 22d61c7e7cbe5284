package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/mailauth/oauthtest"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// `mailbox authorize` completes the loopback flow against the OAuth
// stand-in with the test playing the browser: it opens the printed URL,
// the stand-in consents and redirects to the command's 127.0.0.1 listener.
// The grant is stored sealed and works for a tick; nothing printed holds a
// token; a password mailbox and an unknown one are usage errors.
func TestMailboxAuthorizeLoopback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	idp := oauthtest.New(t)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	keyText := base64.StdEncoding.EncodeToString(b)
	campaign := fmt.Sprintf(`workspace: acme
name: q4
mailboxes:
  - address: ann@acme.test
    smtp_url: smtp://127.0.0.1:2525
    auth: {method: oauth2, provider: generic, client_id_env: CLIENT_ID, auth_url: %q, token_url: %q, scopes: [mail]}
  - address: pat@acme.test
    smtp_url: smtp://pat@127.0.0.1:2525
    password_env: PAT_PASSWORD
steps:
  - subject: "Hi {{.FirstName}}"
    body: "Hello"
`, idp.AuthURL(), idp.TokenURL())
	file := filepath.Join(t.TempDir(), "campaign.yaml")
	if err := os.WriteFile(file, []byte(campaign), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": db.URL, secrets.KeyEnv: keyText, "CLIENT_ID": idp.ClientID}
	if res := runCLI(t, env, "import", "campaign", file); res.code != 0 {
		t.Fatalf("import: %d %s", res.code, res.stderr)
	}

	ios, _, out, _ := cliio.Test()
	f := newFactory(ios, func(k string) string { return env[k] })
	f.DatabaseURL = db.URL
	browsed := make(chan error, 1)
	opts := &MailboxAuthorizeOptions{f: f, Address: "ann@acme.test", Timeout: time.Minute, browse: func(u string) {
		go func() {
			// The browser: follows the stand-in's redirect to the loopback
			// listener and reads its page.
			resp, err := http.Get(u)
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "authorized") {
					err = fmt.Errorf("the loopback page: %d %s", resp.StatusCode, body)
				}
			}
			browsed <- err
		}()
	}}
	if err := mailboxAuthorizeRun(ctx, opts); err != nil {
		t.Fatalf("authorize: %v\n%s", err, out.String())
	}
	if err := <-browsed; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), idp.AuthURL()+"?") || !strings.Contains(out.String(), "code_challenge_method=S256") || !strings.Contains(out.String(), "mailbox ann@acme.test authorized") {
		t.Fatalf("output:\n%s", out.String())
	}
	if strings.Contains(out.String(), "rt-") || strings.Contains(out.String(), "at-") {
		t.Fatalf("the output carries a token:\n%s", out.String())
	}

	// A tick can use the grant: the stored access token is valid, and a
	// refresh with the stored refresh token works.
	key, _, err := secrets.LoadMasterKey(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.Pool.QueryRow(ctx, `SELECT id FROM mailboxes WHERE address = 'ann@acme.test'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	settings := mailauth.Settings{Provider: mailauth.ProviderGeneric, ClientIDEnv: "CLIENT_ID", AuthURL: idp.AuthURL(), TokenURL: idp.TokenURL(), Scopes: []string{"mail"}}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tok, err := mailauth.NewTokens(db.Pool, key, mailauth.Options{LookupEnv: lookup}).AccessToken(ctx, id, "ann@acme.test", settings)
	if err != nil || !idp.Valid("ann@acme.test", tok) || idp.TokenRequests("ann@acme.test") != 0 {
		t.Fatalf("the cached token: %v (refreshes %d)", err, idp.TokenRequests("ann@acme.test"))
	}
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	if tok, err := mailauth.NewTokens(db.Pool, key, mailauth.Options{LookupEnv: lookup, Now: later}).AccessToken(ctx, id, "ann@acme.test", settings); err != nil || !idp.Valid("ann@acme.test", tok) {
		t.Fatalf("a refresh with the stored grant: %v", err)
	}
	var audits int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'mailbox.authorize'`).Scan(&audits); err != nil || audits != 1 {
		t.Fatalf("%d mailbox.authorize audit rows (%v), want 1", audits, err)
	}

	for _, tc := range []struct{ address, want string }{
		{"pat@acme.test", "mailbox pat@acme.test signs in with a password"},
		{"nobody@acme.test", "no mailbox nobody@acme.test: import the campaign file"},
	} {
		res := runCLI(t, env, "mailbox", "authorize", tc.address)
		if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("authorize %s: exit %d, %q; want 2 and %q", tc.address, res.code, res.stderr, tc.want)
		}
	}
}

// `mailbox authorize --device` (RFC 8628) against the stand-in, the test
// playing the person who types the printed code on another device: an
// approval stores a grant a tick can use, a decline stores nothing and
// says so, and a provider without a device endpoint (google; generic
// without device_auth_url) is a usage error naming the fix.
func TestMailboxAuthorizeDevice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	idp := oauthtest.New(t)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	env := map[string]string{"DATABASE_URL": db.URL, secrets.KeyEnv: base64.StdEncoding.EncodeToString(b), "CLIENT_ID": idp.ClientID}
	auth := fmt.Sprintf("{method: oauth2, provider: generic, client_id_env: CLIENT_ID, auth_url: %q, token_url: %q, device_auth_url: %q, scopes: [mail]}",
		idp.AuthURL(), idp.TokenURL(), idp.DeviceAuthURL())
	campaign := fmt.Sprintf(`workspace: acme
name: q4
mailboxes:
  - {address: ann@acme.test, smtp_url: "smtp://127.0.0.1:2525", auth: %s}
  - {address: bob@acme.test, smtp_url: "smtp://127.0.0.1:2525", auth: %s}
  - {address: cat@acme.test, smtp_url: "smtp://127.0.0.1:2525", auth: {method: oauth2, provider: generic, client_id_env: CLIENT_ID, auth_url: %q, token_url: %q, scopes: [mail]}}
  - {address: dan@acme.test, smtp_url: "smtp://127.0.0.1:2525", auth: {method: oauth2, provider: google, client_id_env: CLIENT_ID}}
steps:
  - subject: "Hi {{.FirstName}}"
    body: "Hello"
`, auth, auth, idp.AuthURL(), idp.TokenURL())
	file := filepath.Join(t.TempDir(), "campaign.yaml")
	if err := os.WriteFile(file, []byte(campaign), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "import", "campaign", file); res.code != 0 {
		t.Fatalf("import: %d %s", res.code, res.stderr)
	}
	authorize := func(address string, decide func(code string) bool) (string, error) {
		ios, _, out, _ := cliio.Test()
		f := newFactory(ios, func(k string) string { return env[k] })
		f.DatabaseURL = db.URL
		opts := &MailboxAuthorizeOptions{f: f, Address: address, Timeout: time.Minute, Device: true, enter: func(page, code string) {
			if page == "" || !decide(code) {
				t.Errorf("no device flow with the printed code %q (page %q)", code, page)
			}
		}}
		err := mailboxAuthorizeRun(ctx, opts)
		return out.String(), err
	}

	out, err := authorize("ann@acme.test", func(code string) bool { return idp.ApproveDevice(code, "ann@acme.test") })
	if err != nil || !strings.Contains(out, "mailbox ann@acme.test authorized") || !strings.Contains(out, idp.URL+"/device") {
		t.Fatalf("authorize --device: %v\n%s", err, out)
	}
	if strings.Contains(out, "rt-") || strings.Contains(out, "at-") || strings.Contains(out, "dc-") {
		t.Fatalf("the output carries a token or the device code:\n%s", out)
	}
	key, _, err := secrets.LoadMasterKey(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.Pool.QueryRow(ctx, `SELECT id FROM mailboxes WHERE address = 'ann@acme.test'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	settings := mailauth.Settings{Provider: mailauth.ProviderGeneric, ClientIDEnv: "CLIENT_ID", AuthURL: idp.AuthURL(), TokenURL: idp.TokenURL(), Scopes: []string{"mail"}}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	if tok, err := mailauth.NewTokens(db.Pool, key, mailauth.Options{LookupEnv: lookup, Now: later}).AccessToken(ctx, id, "ann@acme.test", settings); err != nil || !idp.Valid("ann@acme.test", tok) {
		t.Fatalf("a refresh with the grant from the device flow: %v", err)
	}

	// Declined at the provider: an error saying so, and no grant stored.
	if out, err := authorize("bob@acme.test", idp.DenyDevice); err == nil || !strings.Contains(err.Error(), "declined") {
		t.Fatalf("a declined sign-in: %v\n%s", err, out)
	}
	var grants int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM mailbox_oauth_tokens`).Scan(&grants); err != nil || grants != 1 {
		t.Fatalf("%d grants stored (%v), want only ann's", grants, err)
	}

	for _, tc := range []struct{ address, want string }{
		{"cat@acme.test", "device_auth_url"},
		{"dan@acme.test", "Google does not allow device sign-in"},
	} {
		res := runCLI(t, env, "mailbox", "authorize", tc.address, "--device")
		if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("authorize %s --device: exit %d, %q; want 2 and %q", tc.address, res.code, res.stderr, tc.want)
		}
	}
}
