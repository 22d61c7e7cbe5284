package oauthtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// deviceGrantType is RFC 8628's grant at the token endpoint.
const deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"

// deviceCode is one device flow: pending until the test, playing the
// person, approves or declines its user code.
type deviceCode struct {
	userCode, scope, clientID string
	user                      string // who approved; empty while pending
	denied, used              bool
}

// deviceAuth is RFC 8628 §3.1-3.2: a device code, a user code and where
// to type it; the client polls every second.
func (s *Server) deviceAuth(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "unreadable form")
		return
	}
	if r.PostForm.Get("client_id") != s.ClientID {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client")
		return
	}
	dc, uc := randomToken("dc-"), strings.ToUpper(randomToken("")[:8])
	s.mu.Lock()
	s.devices[dc] = &deviceCode{userCode: uc, scope: r.PostForm.Get("scope"), clientID: s.ClientID}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"device_code": dc, "user_code": uc,
		"verification_uri": s.URL + "/device", "expires_in": 900, "interval": 1})
}

// deviceGrant answers a poll (RFC 8628 §3.5) under s.mu: the grant once
// approved, authorization_pending before, access_denied once declined.
func (s *Server) deviceGrant(w http.ResponseWriter, r *http.Request) (rt string, g *grant, ok bool) {
	d := s.devices[r.PostForm.Get("device_code")]
	switch {
	case d == nil || d.used:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or used device code")
	case d.denied:
		oauthError(w, http.StatusBadRequest, "access_denied", "the user declined")
	case d.user == "":
		oauthError(w, http.StatusBadRequest, "authorization_pending", "the user has not signed in yet")
	default:
		d.used = true
		rt = s.newGrant(d.user, d.scope, d.clientID)
		return rt, s.refresh[rt], true
	}
	return "", nil, false
}

// ApproveDevice signs user in on the verification page with userCode, as
// the person would; false when no flow has that code.
func (s *Server) ApproveDevice(userCode, user string) bool {
	return s.decideDevice(userCode, func(d *deviceCode) { d.user = user })
}

// DenyDevice declines the flow with userCode at the verification page.
func (s *Server) DenyDevice(userCode string) bool {
	return s.decideDevice(userCode, func(d *deviceCode) { d.denied = true })
}

func (s *Server) decideDevice(userCode string, decide func(*deviceCode)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.devices {
		if d.userCode == userCode {
			decide(d)
			return true
		}
	}
	return false
}
