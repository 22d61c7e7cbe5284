// Package oauthtest is an in-process stand-in OAuth 2.0 server for tests
// (and later the Dovecot acceptance): an authorization endpoint that
// consents at once as a configured user (PKCE S256 verified, RFC 7636), a
// token endpoint with the authorization_code and refresh_token grants and
// RFC 6749 error bodies, a revocation endpoint (RFC 7009) and an
// introspection endpoint (RFC 7662). It counts the token requests made with
// each grant.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is the stand-in. Its fields are set before the first request.
type Server struct {
	URL      string
	ClientID string
	// ClientSecret, when set, is required at the token endpoint.
	ClientSecret string
	// User is who consents at the authorization endpoint when the request
	// has no login_hint.
	User string
	// AccessTTL is the access tokens' lifetime (expires_in).
	AccessTTL time.Duration
	// RotateRefresh issues a new refresh token with each refresh (as
	// Microsoft does) and retires the old one.
	RotateRefresh bool

	srv *httptest.Server

	mu      sync.Mutex
	codes   map[string]*authCode
	refresh map[string]*grant // refresh token → its grant
	access  map[string]*accessToken
	grants  map[string]*grant      // user → latest grant
	devices map[string]*deviceCode // device code → its flow (RFC 8628)
}

type authCode struct {
	clientID, redirect, challenge, scope, user string
	used                                       bool
}

type grant struct {
	user, scope, clientID string
	revoked               bool
	// tokenRequests counts refresh_token grant requests on this grant.
	tokenRequests int
}

type accessToken struct {
	g      *grant
	expiry time.Time
}

// New starts a stand-in for client "rindactl-test" with a 1 h access TTL;
// it is closed with the test.
func New(t testing.TB) *Server {
	s := &Server{ClientID: "rindactl-test", User: "ann@acme.test", AccessTTL: time.Hour,
		codes: map[string]*authCode{}, refresh: map[string]*grant{}, access: map[string]*accessToken{}, grants: map[string]*grant{},
		devices: map[string]*deviceCode{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /revoke", s.revoke)
	mux.HandleFunc("POST /introspect", s.introspect)
	mux.HandleFunc("POST /devicecode", s.deviceAuth)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// AuthURL, TokenURL, RevokeURL and IntrospectURL are the endpoints.
func (s *Server) AuthURL() string       { return s.URL + "/authorize" }
func (s *Server) TokenURL() string      { return s.URL + "/token" }
func (s *Server) RevokeURL() string     { return s.URL + "/revoke" }
func (s *Server) IntrospectURL() string { return s.URL + "/introspect" }
func (s *Server) DeviceAuthURL() string { return s.URL + "/devicecode" }

func randomToken(prefix string) string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Grant issues a refresh token for user directly, as if the user had
// consented: tests that do not play the browser start here.
func (s *Server) Grant(user, scope string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newGrant(user, scope, s.ClientID)
}

func (s *Server) newGrant(user, scope, clientID string) string {
	g := &grant{user: user, scope: scope, clientID: clientID}
	rt := randomToken("rt-")
	s.refresh[rt] = g
	s.grants[user] = g
	return rt
}

// Revoke revokes user's latest grant, as an admin or the user would: its
// refresh token then gets invalid_grant and its access tokens turn inactive.
func (s *Server) Revoke(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.grants[user]; g != nil {
		g.revoked = true
	}
}

// RetireAccess makes user's access tokens inactive before their expiry,
// as a password change or an admin's sign-out does; the grant stands, so
// a refresh gets a working token.
func (s *Server) RetireAccess(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok, at := range s.access {
		if strings.EqualFold(at.g.user, user) {
			delete(s.access, tok)
		}
	}
}

// TokenRequests is how many refresh_token requests user's latest grant
// has had.
func (s *Server) TokenRequests(user string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.grants[user]; g != nil {
		return g.tokenRequests
	}
	return 0
}

// Valid reports whether token is an active access token of user: what an
// SMTP or IMAP server checks for XOAUTH2.
func (s *Server) Valid(user, token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.access[token]
	return at != nil && !at.g.revoked && time.Now().Before(at.expiry) && strings.EqualFold(at.g.user, user)
}

// oauthError writes an RFC 6749 §5.2 error body.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

func loopbackRedirect(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// authorize consents at once and redirects to the client's loopback
// listener with a code (RFC 8252 §7.3), or with an error when the request
// is malformed but its redirect is safe to use.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	if q.Get("client_id") != s.ClientID || !loopbackRedirect(redirect) {
		http.Error(w, "unknown client or a redirect that is not a loopback address", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	v := url.Values{"state": {q.Get("state")}}
	switch {
	case q.Get("response_type") != "code":
		v.Set("error", "unsupported_response_type")
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		v.Set("error", "invalid_request")
		v.Set("error_description", "PKCE with S256 is required")
	default:
		user := q.Get("login_hint")
		if user == "" {
			user = s.User
		}
		code := randomToken("code-")
		s.mu.Lock()
		s.codes[code] = &authCode{clientID: s.ClientID, redirect: redirect, challenge: q.Get("code_challenge"), scope: q.Get("scope"), user: user}
		s.mu.Unlock()
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) clientOK(r *http.Request) bool {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != s.ClientID {
		return false
	}
	return s.ClientSecret == "" || subtle.ConstantTimeCompare([]byte(secret), []byte(s.ClientSecret)) == 1
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "unreadable form")
		return
	}
	if !s.clientOK(r) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var g *grant
	var rt string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		c := s.codes[r.PostForm.Get("code")]
		if c == nil || c.used || c.redirect != r.PostForm.Get("redirect_uri") {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or used code, or another redirect_uri")
			return
		}
		c.used = true
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
			return
		}
		rt = s.newGrant(c.user, c.scope, c.clientID)
		g = s.refresh[rt]
	case "refresh_token":
		rt = r.PostForm.Get("refresh_token")
		g = s.refresh[rt]
		if g == nil {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		g.tokenRequests++
		if g.revoked {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the grant was revoked")
			return
		}
		if s.RotateRefresh {
			delete(s.refresh, rt)
			rt = randomToken("rt-")
			s.refresh[rt] = g
		}
	case deviceGrantType:
		var ok bool
		if rt, g, ok = s.deviceGrant(w, r); !ok {
			return
		}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "authorization_code or refresh_token")
		return
	}
	at := randomToken("at-")
	s.access[at] = &accessToken{g: g, expiry: time.Now().Add(s.AccessTTL)}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer",
		"expires_in": int64(s.AccessTTL / time.Second), "refresh_token": rt, "scope": g.scope})
}

// revoke is RFC 7009: the token's grant is revoked, and the answer is 200
// whether or not the token was known.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "unreadable form")
		return
	}
	tok := r.PostForm.Get("token")
	s.mu.Lock()
	if g := s.refresh[tok]; g != nil {
		g.revoked = true
	} else if at := s.access[tok]; at != nil {
		delete(s.access, tok)
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// introspect is RFC 7662, as Dovecot's oauth2 passdb asks it.
func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "unreadable form")
		return
	}
	s.mu.Lock()
	at := s.access[r.PostForm.Get("token")]
	resp := map[string]any{"active": false}
	if at != nil && !at.g.revoked && time.Now().Before(at.expiry) {
		resp = map[string]any{"active": true, "scope": at.g.scope, "client_id": at.g.clientID, "username": at.g.user,
			"token_type": "Bearer", "exp": at.expiry.Unix()}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}
