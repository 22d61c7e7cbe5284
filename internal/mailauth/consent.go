package mailauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// ConsentTimeoutDefault is how long the consent flow waits for the
// browser's redirect.
const ConsentTimeoutDefault = 5 * time.Minute

// Consent is the consent flow a person completes from a terminal: a
// loopback redirect (RFC 8252 §7.3) on 127.0.0.1 with a port the system
// picks, PKCE S256 (RFC 7636) and a state checked on the way back.
type Consent struct {
	Settings  Settings
	LookupEnv func(string) (string, bool)
	// LoginHint preselects the mailbox's account at the provider.
	LoginHint string
	// Timeout bounds the wait for the redirect; 0: ConsentTimeoutDefault.
	Timeout time.Duration
	// HTTPClient talks to the token endpoint; nil: http.DefaultClient.
	HTTPClient *http.Client
	// Show is given the URL to open and the address the flow waits on.
	Show func(authURL, redirectURL string)
}

type callback struct {
	code string
	err  error
}

// Run waits for the person's consent and returns the tokens; the refresh
// token is always there (its absence is an error). No error holds a token.
func (c Consent) Run(ctx context.Context) (*oauth2.Token, error) {
	if c.Timeout == 0 {
		c.Timeout = ConsentTimeoutDefault
	}
	if c.HTTPClient == nil {
		c.HTTPClient = http.DefaultClient
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1 for the redirect: %w", err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	cfg, err := c.Settings.Config(c.LookupEnv, redirect)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	state, verifier := oauth2.GenerateVerifier(), oauth2.GenerateVerifier()
	got := make(chan callback, 1)
	srv := &http.Server{Handler: callbackHandler(state, got), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	// Shutdown, not Close: the browser's page is written after the code
	// reached Run, and Close could cut it off (the browser saw EOF).
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	c.Show(cfg.AuthCodeURL(state, c.authOptions(verifier)...), redirect)
	timer := time.NewTimer(c.Timeout)
	defer timer.Stop()
	var cb callback
	select {
	case cb = <-got:
	case <-timer.C:
		return nil, fmt.Errorf("no redirect from the provider within %s: open the URL in a browser on this machine and run the command again", c.Timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if cb.err != nil {
		return nil, cb.err
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, c.HTTPClient), cb.code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, fmt.Errorf("exchange the code at the token endpoint: %s", describe(err))
	}
	if tok.RefreshToken == "" {
		return nil, errors.New("the provider returned no refresh token: the app registration must allow offline access (Microsoft: the offline_access scope; Google: a consent prompt) and run the command again")
	}
	return tok, nil
}

// authOptions asks for PKCE, the mailbox's account and, at Google, a
// refresh token even for an account that consented before.
func (c Consent) authOptions(verifier string) []oauth2.AuthCodeOption {
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	if c.LoginHint != "" {
		opts = append(opts, oauth2.SetAuthURLParam("login_hint", c.LoginHint))
	}
	if c.Settings.Provider == ProviderGoogle {
		opts = append(opts, oauth2.AccessTypeOffline, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	return opts
}

// callbackHandler takes the one redirect whose state matches; any other
// request is answered 400 and the flow keeps waiting.
func callbackHandler(state string, got chan<- callback) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("state") != state {
			http.Error(w, "rindactl: this redirect's state does not match the flow in progress; it was ignored", http.StatusBadRequest)
			return
		}
		cb := callback{code: q.Get("code")}
		switch {
		case q.Get("error") != "":
			cb.err = fmt.Errorf("the provider refused the authorization: %s (%s)", q.Get("error"), q.Get("error_description"))
		case cb.code == "":
			cb.err = errors.New("the provider's redirect carried no code")
		}
		select {
		case got <- cb:
		default: // a second redirect: the first one counts
		}
		if cb.err != nil {
			http.Error(w, "rindactl: authorization failed; see the terminal", http.StatusBadRequest)
			return
		}
		_, _ = fmt.Fprintln(w, "rindactl: mailbox authorized. You may close this tab and return to the terminal.")
	})
	return mux
}
