package mailauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// DeviceConsent is the device authorization grant (RFC 8628) for a
// terminal with no browser on its machine: the person opens the provider's
// verification page on any device and types the code shown here, while the
// command polls the token endpoint. Microsoft allows it for its SMTP and
// IMAP scopes; Google does not allow it for mail scopes.
type DeviceConsent struct {
	Settings  Settings
	LookupEnv func(string) (string, bool)
	// Timeout bounds the wait for the person (the provider's code may
	// expire sooner); 0: ConsentTimeoutDefault.
	Timeout time.Duration
	// HTTPClient talks to the provider; nil: http.DefaultClient.
	HTTPClient *http.Client
	// Show is given the page to open and the code to type there.
	Show func(verificationURI, userCode string)
}

// Run waits for the person's sign-in and returns the tokens, with a
// refresh token (its absence is an error). No error holds a token.
func (c DeviceConsent) Run(ctx context.Context) (*oauth2.Token, error) {
	if c.Settings.Provider == ProviderGoogle {
		return nil, &ConfigError{msg: "Google does not allow device sign-in for mail scopes: run without --device (forward the printed port over ssh on a machine without a browser)"}
	}
	if c.Timeout == 0 {
		c.Timeout = ConsentTimeoutDefault
	}
	if c.HTTPClient == nil {
		c.HTTPClient = http.DefaultClient
	}
	cfg, err := c.Settings.Config(c.LookupEnv, "")
	if err != nil {
		return nil, err
	}
	if cfg.Endpoint.DeviceAuthURL == "" {
		return nil, &ConfigError{msg: "provider generic has no device_auth_url: add the provider's RFC 8628 endpoint to the mailbox's auth mapping, or run without --device"}
	}
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, c.HTTPClient), c.Timeout)
	defer cancel()
	da, err := cfg.DeviceAuth(ctx)
	if err != nil {
		return nil, fmt.Errorf("ask the device authorization endpoint for a code: %s", describe(err))
	}
	c.Show(da.VerificationURI, da.UserCode)
	tok, err := cfg.DeviceAccessToken(ctx, da)
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "access_denied":
		return nil, errors.New("the sign-in was declined at the provider; run the command again and approve it")
	case errors.As(err, &re) && re.ErrorCode == "expired_token", errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("no sign-in with the code within %s (or the provider's code expired): run the command again", c.Timeout)
	case err != nil && ctx.Err() == context.Canceled:
		return nil, ctx.Err()
	case err != nil:
		return nil, fmt.Errorf("poll the token endpoint: %s", describe(err))
	}
	if tok.RefreshToken == "" {
		return nil, errors.New("the provider returned no refresh token: the app registration must allow offline access (Microsoft: the offline_access scope) and run the command again")
	}
	return tok, nil
}
