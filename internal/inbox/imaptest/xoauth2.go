package imaptest

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-sasl"
)

// SetBearer makes the server take AUTHENTICATE XOAUTH2 and refuse LOGIN:
// a login passes only when bearer(user, token) says the access token is
// the user's (tests ask the OAuth stand-in). Call it before the first
// connection.
func (s *Server) SetBearer(bearer func(user, token string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bearer = bearer
}

// SetBearerMechanisms is the SASL mechanisms a SetBearer server offers:
// XOAUTH2 (the default), OAUTHBEARER, or both.
func (s *Server) SetBearerMechanisms(mechs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bearerMechs = mechs
}

func (s *Server) bearerFunc() func(user, token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bearer
}

// xoauth2Session is the in-memory session with XOAUTH2 in front of it:
// a verified token logs the session in as its account.
type xoauth2Session struct {
	imapserver.Session
	server *Server
}

var errNoPasswords = &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeAuthenticationFailed, Text: "this server takes AUTHENTICATE XOAUTH2 only"}

func (x *xoauth2Session) Login(string, string) error { return errNoPasswords }

func (x *xoauth2Session) AuthenticateMechanisms() []string {
	x.server.mu.Lock()
	defer x.server.mu.Unlock()
	if len(x.server.bearerMechs) == 0 {
		return []string{"XOAUTH2"}
	}
	return slices.Clone(x.server.bearerMechs)
}

func (x *xoauth2Session) Authenticate(mech string) (sasl.Server, error) {
	if !slices.Contains(x.AuthenticateMechanisms(), mech) {
		return nil, errors.New("unsupported mechanism")
	}
	if mech == sasl.OAuthBearer {
		return sasl.NewOAuthBearerServer(x.oauthBearer), nil
	}
	return &xoauth2Server{x: x}, nil
}

// oauthBearer checks an OAUTHBEARER login as xoauth2Server does.
func (x *xoauth2Session) oauthBearer(opts sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
	x.server.mu.Lock()
	password, known := x.server.password[opts.Username]
	x.server.mu.Unlock()
	if !known || !x.server.bearerFunc()(opts.Username, opts.Token) {
		return &sasl.OAuthBearerError{Status: "invalid_token", Schemes: "bearer"}
	}
	if err := x.Session.Login(opts.Username, password); err != nil {
		return &sasl.OAuthBearerError{Status: "invalid_request", Schemes: "bearer"}
	}
	return nil
}

type xoauth2Server struct {
	x *xoauth2Session
	// refused: the token was refused and the error challenge sent.
	refused bool
}

// errorChallenge is Gmail's XOAUTH2 error challenge for a refused token
// (developers.google.com/gmail/imap/xoauth2-protocol).
const errorChallenge = `{"status":"401","schemes":"Bearer","scope":"https://mail.google.com/"}`

func (a *xoauth2Server) Next(response []byte) ([]byte, bool, error) {
	if a.refused {
		// The client's answer to the error challenge. Like Dovecot 2.3,
		// refuse an empty one (sent as "=", valid only as an initial
		// response) as a protocol error, not as the login's refusal.
		if len(response) == 0 {
			return nil, true, &imap.Error{Type: imap.StatusResponseTypeBad, Text: "Invalid base64 data in continued response"}
		}
		return nil, true, &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeAuthenticationFailed, Text: "Invalid credentials (Failure)"}
	}
	if response == nil {
		return []byte{}, false, nil
	}
	var user, token string
	for _, f := range bytes.Split(response, []byte{1}) {
		k, v, _ := strings.Cut(string(f), "=")
		switch k {
		case "user":
			user = v
		case "auth":
			token, _ = strings.CutPrefix(v, "Bearer ")
		}
	}
	a.x.server.mu.Lock()
	password, known := a.x.server.password[user]
	a.x.server.mu.Unlock()
	if !known || !a.x.server.bearerFunc()(user, token) {
		a.refused = true
		return []byte(errorChallenge), false, nil
	}
	return nil, true, a.x.Session.Login(user, password)
}
