package sequence

import (
	"encoding/json"
	"fmt"

	"github.com/rindactl/rindactl/internal/mailauth"
)

// The ways a mailbox signs in to its SMTP and IMAP servers.
const (
	AuthPassword = "password"
	AuthOAuth2   = "oauth2"
)

// authFile is a mailbox's `auth:` mapping. Without one (or with method
// password) the mailbox signs in with the password in password_env.
type authFile struct {
	Method          string   `yaml:"method"`
	Provider        string   `yaml:"provider"`
	Tenant          string   `yaml:"tenant"`
	ClientIDEnv     string   `yaml:"client_id_env"`
	ClientSecretEnv string   `yaml:"client_secret_env"`
	AuthURL         string   `yaml:"auth_url"`
	TokenURL        string   `yaml:"token_url"`
	RevokeURL       string   `yaml:"revoke_url"`
	DeviceAuthURL   string   `yaml:"device_auth_url"`
	Scopes          []string `yaml:"scopes"`
}

var authFields = &fieldSet{keys: []string{"method", "provider", "tenant", "client_id_env", "client_secret_env", "auth_url", "token_url", "revoke_url", "device_auth_url", "scopes"}}

// validate returns the mailbox's OAuth2 settings, nil for password auth.
func (a *authFile) validate(path string) (*mailauth.Settings, error) {
	if a == nil {
		return nil, nil
	}
	s := mailauth.Settings{Provider: a.Provider, Tenant: a.Tenant, ClientIDEnv: a.ClientIDEnv, ClientSecretEnv: a.ClientSecretEnv,
		AuthURL: a.AuthURL, TokenURL: a.TokenURL, RevokeURL: a.RevokeURL, DeviceAuthURL: a.DeviceAuthURL, Scopes: a.Scopes}
	switch a.Method {
	case AuthOAuth2:
	case "", AuthPassword:
		if a.Method == "" && a.Provider != "" {
			return nil, fmt.Errorf("%s.method: required; use oauth2 with a provider", path)
		}
		if !s.IsZero() {
			return nil, fmt.Errorf("%s.method: the OAuth2 fields need method oauth2; set it, or remove them for password auth", path)
		}
		return nil, nil
	default:
		return nil, fmt.Errorf("%s.method: %q is not password or oauth2", path, a.Method)
	}
	if err := s.Validate(path); err != nil {
		return nil, err
	}
	return &s, nil
}

// authRecord is the JSON the store keeps for a mailbox's OAuth2 settings
// (names of variables and endpoints only); nil for password auth.
func authRecord(s *mailauth.Settings) []byte {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // strings and a string slice always marshal
	}
	return b
}

// authFromRecord reads the stored OAuth2 settings; nil for password auth.
func authFromRecord(b []byte) (*mailauth.Settings, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var s mailauth.Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("auth: stored settings are not JSON: %w", err)
	}
	return &s, nil
}

// oauthEndpoint checks an oauth2 mailbox's SMTP settings: no password
// variable, and the URL's user (the XOAUTH2 user) defaults to the address,
// over TLS unless the server is on loopback.
func oauthEndpoint(path string, f mailboxFile, ep SMTPEndpoint) (SMTPEndpoint, error) {
	if f.PasswordEnv != "" {
		return ep, fmt.Errorf("%s.password_env: an oauth2 mailbox signs in with tokens from 'rindactl mailbox authorize'; remove password_env", path)
	}
	if ep.Username == "" {
		ep.Username = f.Address
		if ep.TLS == TLSOpportunistic && !ep.Loopback() {
			ep.TLS = TLSRequired
		}
	}
	return ep, nil
}

// checkAuth validates the mailbox's auth and, for oauth2, its SMTP
// endpoint's user and TLS.
func (f mailboxFile) checkAuth(path string, ep SMTPEndpoint) (*mailauth.Settings, SMTPEndpoint, error) {
	oauth, err := f.Auth.validate(path + ".auth")
	if err != nil || oauth == nil {
		return nil, ep, err
	}
	ep, err = oauthEndpoint(path, f, ep)
	return oauth, ep, err
}
