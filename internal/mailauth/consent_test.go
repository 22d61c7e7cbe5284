package mailauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/mailauth/oauthtest"
)

// The loopback listener takes only the redirect whose state matches: a
// forged one is answered 400 and ignored, and the real one completes.
// Without a redirect the flow ends at its timeout with an error saying
// what to do.
func TestConsentChecksStateAndTimesOut(t *testing.T) {
	t.Parallel()
	s := oauthtest.New(t)
	c := mailauth.Consent{Settings: settings(s), LookupEnv: lookup(s), LoginHint: "ann@acme.test", Timeout: time.Minute}
	c.Show = func(authURL, redirect string) {
		go func() {
			forged, err := http.Get(redirect + "?" + url.Values{"state": {"forged"}, "code": {"stolen"}}.Encode())
			if err != nil || forged.StatusCode != http.StatusBadRequest {
				t.Errorf("a forged redirect: %v %v, want 400", forged, err)
			}
			if forged != nil {
				forged.Body.Close()
			}
			resp, err := http.Get(authURL) // the browser, following the consent
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	tok, err := c.Run(context.Background())
	if err != nil || tok.RefreshToken == "" || !s.Valid("ann@acme.test", tok.AccessToken) {
		t.Fatalf("consent: %v", err)
	}

	c.Timeout = 50 * time.Millisecond
	c.Show = func(string, string) {}
	if _, err := c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no redirect from the provider within") {
		t.Fatalf("no browser: %v, want the timeout's error", err)
	}
}

// The device grant's endpoint: Microsoft's own by default (the tenant's
// devicecode), the file's for generic, none for Google, whose device flow
// does not allow mail scopes (DeviceConsent refuses it before any request).
func TestDeviceEndpoints(t *testing.T) {
	t.Parallel()
	ms, _ := mailauth.Settings{Provider: mailauth.ProviderMicrosoft, Tenant: "acme.onmicrosoft.com"}.Endpoint()
	if ms.DeviceAuthURL != "https://login.microsoftonline.com/acme.onmicrosoft.com/oauth2/v2.0/devicecode" {
		t.Errorf("microsoft device endpoint %q", ms.DeviceAuthURL)
	}
	gen, _ := mailauth.Settings{Provider: mailauth.ProviderGeneric, DeviceAuthURL: "https://idp.example/device"}.Endpoint()
	if gen.DeviceAuthURL != "https://idp.example/device" {
		t.Errorf("generic device endpoint %q", gen.DeviceAuthURL)
	}
	_, err := mailauth.DeviceConsent{Settings: mailauth.Settings{Provider: mailauth.ProviderGoogle, ClientIDEnv: "X"},
		LookupEnv: func(string) (string, bool) { return "id", true }, Show: func(string, string) { t.Error("google showed a code") }}.Run(context.Background())
	var cerr *mailauth.ConfigError
	if !errors.As(err, &cerr) {
		t.Errorf("google --device: %v, want a configuration error", err)
	}
	if err := (mailauth.Settings{Provider: mailauth.ProviderGeneric, ClientIDEnv: "X", AuthURL: "https://idp.example/a", TokenURL: "https://idp.example/t",
		DeviceAuthURL: "ftp://idp.example/d", Scopes: []string{"mail"}}).Validate("auth"); err == nil || !strings.Contains(err.Error(), "auth.device_auth_url") {
		t.Errorf("an ftp device_auth_url: %v, want an error naming auth.device_auth_url", err)
	}
}
