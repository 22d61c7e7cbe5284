package mailauth_test

import (
	"context"
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
