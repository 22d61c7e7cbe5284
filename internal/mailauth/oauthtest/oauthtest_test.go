package oauthtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/rindactl/rindactl/internal/mailauth/oauthtest"
)

// The stand-in speaks what golang.org/x/oauth2 speaks: a PKCE code flow,
// refresh, RFC 6749 error bodies, revocation and introspection.
func TestStandIn(t *testing.T) {
	t.Parallel()
	s := oauthtest.New(t)
	ctx := context.Background()
	cfg := &oauth2.Config{ClientID: s.ClientID, Endpoint: oauth2.Endpoint{AuthURL: s.AuthURL(), TokenURL: s.TokenURL(), AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: "http://127.0.0.1:1/cb", Scopes: []string{"mail"}}
	verifier := oauth2.GenerateVerifier()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code := func(u string) url.Values {
		t.Helper()
		resp, err := noFollow.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("authorize: %d %v", resp.StatusCode, err)
		}
		return loc.Query()
	}
	if q := code(cfg.AuthCodeURL("st")); q.Get("error") != "invalid_request" {
		t.Fatalf("authorize without PKCE: %v, want invalid_request", q)
	}
	q := code(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	if q.Get("state") != "st" || q.Get("code") == "" {
		t.Fatalf("authorize: %v", q)
	}
	if _, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption("wrong-verifier-wrong-verifier-wrong-verifier")); !isGrantError(err) {
		t.Fatalf("a wrong verifier: %v, want invalid_grant", err)
	}
	q = code(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil || tok.RefreshToken == "" || !s.Valid(s.User, tok.AccessToken) {
		t.Fatalf("exchange: %+v %v", tok, err)
	}
	if _, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier)); !isGrantError(err) {
		t.Fatalf("a used code: %v, want invalid_grant", err)
	}

	fresh, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil || fresh.AccessToken == tok.AccessToken || s.TokenRequests(s.User) != 1 {
		t.Fatalf("refresh: %v, %d requests", err, s.TokenRequests(s.User))
	}
	if active := introspect(t, s, fresh.AccessToken); active["active"] != true || active["username"] != s.User {
		t.Fatalf("introspect: %v", active)
	}
	resp, err := http.PostForm(s.RevokeURL(), url.Values{"token": {tok.RefreshToken}})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %v", err)
	}
	resp.Body.Close()
	if _, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); !isGrantError(err) {
		t.Fatalf("refresh after revocation: %v, want invalid_grant", err)
	}
	if active := introspect(t, s, fresh.AccessToken); active["active"] != false || s.Valid(s.User, fresh.AccessToken) {
		t.Fatalf("introspect after revocation: %v", active)
	}
}

func isGrantError(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == "invalid_grant" && re.ErrorDescription != ""
}

func introspect(t *testing.T, s *oauthtest.Server, token string) map[string]any {
	t.Helper()
	resp, err := http.Post(s.IntrospectURL(), "application/x-www-form-urlencoded", strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
