package sequence

import (
	"slices"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/mailauth"
)

const oauthCampaign = `
workspace: acme
name: q4
mailboxes:
  - address: ann@acme.test
    smtp_url: smtp://smtp.office365.com:587
    imap_url: imaps://outlook.office365.com
    auth:
      method: oauth2
      provider: microsoft
      tenant: acme.onmicrosoft.com
      client_id_env: RINDA_M365_CLIENT_ID
      client_secret_env: RINDA_M365_CLIENT_SECRET
  - address: bob@acme.test
    smtp_url: smtps://smtp.gmail.com
    auth: {method: oauth2, provider: google, client_id_env: GOOGLE_ID}
  - address: cy@acme.test
    smtp_url: smtp://127.0.0.1:2525
    auth: {method: oauth2, provider: generic, client_id_env: ID, auth_url: "http://127.0.0.1:9/auth", token_url: "http://127.0.0.1:9/token", scopes: [mail]}
steps:
  - subject: "Hi {{.FirstName}}"
    body: "Body"
`

// An oauth2 mailbox: the provider's endpoints and scopes by default, the
// address as the XOAUTH2 user over TLS, no password needed for IMAP, and
// the settings survive the store's round trip.
func TestParseCampaignOAuth2(t *testing.T) {
	t.Parallel()
	c, err := ParseCampaign(strings.NewReader(oauthCampaign))
	if err != nil {
		t.Fatal(err)
	}
	ms := c.Mailboxes[0]
	if ms.OAuth2 == nil || ms.OAuth2.Provider != mailauth.ProviderMicrosoft || ms.SMTP.Username != "ann@acme.test" || ms.SMTP.TLS != TLSRequired || ms.IMAP == nil {
		t.Fatalf("microsoft mailbox = %+v", ms)
	}
	ep, _ := ms.OAuth2.Endpoint()
	if ep.TokenURL != "https://login.microsoftonline.com/acme.onmicrosoft.com/oauth2/v2.0/token" {
		t.Errorf("microsoft token URL = %s", ep.TokenURL)
	}
	if !slices.Contains(ms.OAuth2.ScopeList(), "offline_access") || !slices.Contains(ms.OAuth2.ScopeList(), "https://outlook.office.com/SMTP.Send") {
		t.Errorf("microsoft scopes = %v", ms.OAuth2.ScopeList())
	}
	if g := c.Mailboxes[1].OAuth2; g == nil || !slices.Equal(g.ScopeList(), []string{"https://mail.google.com/"}) {
		t.Errorf("google mailbox = %+v", g)
	}
	back, err := campaignFromRecord(c.Record())
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Mailboxes {
		a, b := c.Mailboxes[i], back.Mailboxes[i]
		if b.OAuth2 == nil || a.SMTP != b.SMTP || a.OAuth2.Provider != b.OAuth2.Provider || a.OAuth2.TokenURL != b.OAuth2.TokenURL ||
			a.OAuth2.ClientSecretEnv != b.OAuth2.ClientSecretEnv || !slices.Equal(a.OAuth2.ScopeList(), b.OAuth2.ScopeList()) {
			t.Errorf("mailbox %d after the store: %+v %+v, want %+v %+v", i, b.SMTP, b.OAuth2, a.SMTP, a.OAuth2)
		}
	}
}

func TestParseCampaignOAuth2Rejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, old, new, want string }{
		{"unknown provider", "provider: google", "provider: yahoo", `mailboxes[1].auth.provider: "yahoo" is not google, microsoft or generic`},
		{"unknown method", "method: oauth2, provider: google", "method: oauth, provider: google", `mailboxes[1].auth.method: "oauth" is not password or oauth2`},
		{"no method", "method: oauth2, provider: google", "provider: google", "mailboxes[1].auth.method: required"},
		{"oauth fields with password", "method: oauth2, provider: google, client_id_env: GOOGLE_ID", "method: password, client_id_env: X", "mailboxes[1].auth.method: the OAuth2 fields need method oauth2"},
		{"no client id", ", client_id_env: GOOGLE_ID", "", "mailboxes[1].auth.client_id_env: required"},
		{"bad client id env", "client_id_env: GOOGLE_ID", "client_id_env: 1X", `mailboxes[1].auth.client_id_env: "1X" is not an environment variable name`},
		{"bad secret env", "client_secret_env: RINDA_M365_CLIENT_SECRET", "client_secret_env: a-b", `mailboxes[0].auth.client_secret_env: "a-b"`},
		{"tenant on google", "provider: google,", "provider: google, tenant: x,", "mailboxes[1].auth.tenant: only microsoft has tenants"},
		{"generic without token url", `, token_url: "http://127.0.0.1:9/token"`, "", "mailboxes[2].auth.token_url: required with provider generic"},
		{"generic without scopes", ", scopes: [mail]", "", "mailboxes[2].auth.scopes: required with provider generic"},
		{"clear-text endpoint", "http://127.0.0.1:9/token", "http://idp.example.com/token", "mailboxes[2].auth.token_url: \"http://idp.example.com/token\" is not an https URL"},
		{"password_env too", "    auth: {method: oauth2, provider: google", "    password_env: PW\n    auth: {method: oauth2, provider: google", "mailboxes[1].password_env: an oauth2 mailbox signs in with tokens from 'rindactl mailbox authorize'"},
		{"unknown auth field", "tenant: acme", "tenan: acme", "mailboxes[0].auth.tenan: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := strings.Replace(oauthCampaign, tc.old, tc.new, 1)
			if doc == oauthCampaign {
				t.Fatalf("replacement %q not found", tc.old)
			}
			_, err := ParseCampaign(strings.NewReader(doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line containing %q", err, tc.want)
			}
		})
	}
}
