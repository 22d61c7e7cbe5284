// Package mailauth signs mailboxes in with OAuth2 (issue 38): the settings
// a campaign file gives a mailbox, the tokens `mailbox authorize` obtains
// (sealed with the master key), the access token cached in the database and
// refreshed once per expiry for every process and host, and SASL XOAUTH2.
package mailauth

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/oauth2"
)

// The providers a mailbox's auth may name.
const (
	ProviderGoogle    = "google"
	ProviderMicrosoft = "microsoft"
	ProviderGeneric   = "generic"
)

// MicrosoftTenantDefault lets any work or school account sign in; a
// tenant's own id or domain narrows it to that tenant.
const MicrosoftTenantDefault = "organizations"

// Settings are a mailbox's OAuth2 settings from the campaign file. They hold
// the names of the variables with the client id and secret, never a secret.
type Settings struct {
	Provider string `json:"provider"`
	// Tenant is Microsoft's tenant (id or domain); empty: organizations.
	Tenant string `json:"tenant,omitempty"`
	// ClientIDEnv and ClientSecretEnv name the environment variables with
	// the app registration's client id and secret (the secret is optional:
	// public clients have none).
	ClientIDEnv     string `json:"client_id_env"`
	ClientSecretEnv string `json:"client_secret_env,omitempty"`
	// AuthURL, TokenURL and RevokeURL override the provider's endpoints
	// (required for generic; tests point them at a stand-in).
	AuthURL   string `json:"auth_url,omitempty"`
	TokenURL  string `json:"token_url,omitempty"`
	RevokeURL string `json:"revoke_url,omitempty"`
	// DeviceAuthURL is the RFC 8628 device authorization endpoint
	// (`mailbox authorize --device`); Microsoft's is the default for
	// microsoft.
	DeviceAuthURL string   `json:"device_auth_url,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
}

// GoogleScopes and MicrosoftScopes are what SMTP and IMAP need: Google's
// full mail scope; Microsoft's SMTP and IMAP scopes, with offline_access
// for a refresh token.
var (
	GoogleScopes    = []string{"https://mail.google.com/"}
	MicrosoftScopes = []string{"https://outlook.office.com/SMTP.Send", "https://outlook.office.com/IMAP.AccessAsUser.All", "offline_access"}
)

// IsZero says no field is set.
func (s Settings) IsZero() bool {
	return s.Provider+s.Tenant+s.ClientIDEnv+s.ClientSecretEnv+s.AuthURL+s.TokenURL+s.RevokeURL+s.DeviceAuthURL == "" && len(s.Scopes) == 0
}

// Validate checks the settings; path is the field's path in the campaign
// file (mailboxes[0].auth), which every error names with its fix.
func (s Settings) Validate(path string) error {
	if err := s.checkProvider(path); err != nil {
		return err
	}
	if err := checkEnvName(path+".client_id_env", s.ClientIDEnv, true); err != nil {
		return err
	}
	if err := checkEnvName(path+".client_secret_env", s.ClientSecretEnv, false); err != nil {
		return err
	}
	if err := s.checkEndpoints(path); err != nil {
		return err
	}
	return s.checkScopes(path)
}

func (s Settings) checkProvider(path string) error {
	switch s.Provider {
	case ProviderGoogle, ProviderMicrosoft, ProviderGeneric:
	case "":
		return fmt.Errorf("%s.provider: required with method oauth2; use google, microsoft or generic", path)
	default:
		return fmt.Errorf("%s.provider: %q is not google, microsoft or generic", path, s.Provider)
	}
	if s.Tenant != "" && s.Provider != ProviderMicrosoft {
		return fmt.Errorf("%s.tenant: only microsoft has tenants; remove it", path)
	}
	if s.Tenant != "" && (strings.ContainsAny(s.Tenant, "/?#% ") || s.Tenant != strings.TrimSpace(s.Tenant)) {
		return fmt.Errorf("%s.tenant: %q is not a tenant id or domain (contoso.onmicrosoft.com)", path, s.Tenant)
	}
	return nil
}

func (s Settings) checkEndpoints(path string) error {
	for _, u := range []struct{ field, value string }{{"auth_url", s.AuthURL}, {"token_url", s.TokenURL}, {"revoke_url", s.RevokeURL}, {"device_auth_url", s.DeviceAuthURL}} {
		if u.value == "" {
			if s.Provider == ProviderGeneric && (u.field == "auth_url" || u.field == "token_url") {
				return fmt.Errorf("%s.%s: required with provider generic; give the provider's endpoint", path, u.field)
			}
			continue
		}
		if err := checkEndpoint(u.value); err != nil {
			return fmt.Errorf("%s.%s: %w", path, u.field, err)
		}
	}
	return nil
}

func (s Settings) checkScopes(path string) error {
	if s.Provider == ProviderGeneric && len(s.Scopes) == 0 {
		return fmt.Errorf("%s.scopes: required with provider generic; list the scopes SMTP and IMAP need", path)
	}
	for i, sc := range s.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\r\n\"\\") {
			return fmt.Errorf("%s.scopes[%d]: %q is not a scope", path, i, sc)
		}
	}
	return nil
}

func checkEnvName(field, name string, required bool) error {
	if name == "" {
		if required {
			return fmt.Errorf("%s: required with method oauth2; name the environment variable holding the app registration's value", field)
		}
		return nil
	}
	for i, r := range name {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (r < '0' || r > '9' || i == 0) {
			return fmt.Errorf("%s: %q is not an environment variable name", field, name)
		}
	}
	return nil
}

// checkEndpoint accepts https URLs, and http only on a loopback host (a
// stand-in in tests): tokens never cross a network in clear text.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q is not an https URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("%q is not an https URL (http only on a loopback host)", raw)
}

// Endpoint is where the flows go: the overrides, else the provider's own.
func (s Settings) Endpoint() (ep oauth2.Endpoint, revokeURL string) {
	switch s.Provider {
	case ProviderGoogle:
		ep, revokeURL = oauth2.Endpoint{AuthURL: "https://accounts.google.com/o/oauth2/auth", TokenURL: "https://oauth2.googleapis.com/token"}, "https://oauth2.googleapis.com/revoke"
	case ProviderMicrosoft:
		tenant := s.Tenant
		if tenant == "" {
			tenant = MicrosoftTenantDefault
		}
		base := "https://login.microsoftonline.com/" + url.PathEscape(tenant) + "/oauth2/v2.0/"
		ep = oauth2.Endpoint{AuthURL: base + "authorize", TokenURL: base + "token", DeviceAuthURL: base + "devicecode"}
	}
	ep.AuthStyle = oauth2.AuthStyleInParams
	if s.AuthURL != "" {
		ep.AuthURL = s.AuthURL
	}
	if s.TokenURL != "" {
		ep.TokenURL = s.TokenURL
	}
	if s.RevokeURL != "" {
		revokeURL = s.RevokeURL
	}
	if s.DeviceAuthURL != "" {
		ep.DeviceAuthURL = s.DeviceAuthURL
	}
	return ep, revokeURL
}

// ScopeList is the scopes asked for: the file's, else the provider's.
func (s Settings) ScopeList() []string {
	switch {
	case len(s.Scopes) > 0:
		return slices.Clone(s.Scopes)
	case s.Provider == ProviderGoogle:
		return slices.Clone(GoogleScopes)
	case s.Provider == ProviderMicrosoft:
		return slices.Clone(MicrosoftScopes)
	}
	return nil
}

// Config is the oauth2.Config for these settings, with the client id and
// secret read from their variables (lookup is os.LookupEnv in production).
// redirectURL is empty outside the consent flow.
func (s Settings) Config(lookup func(string) (string, bool), redirectURL string) (*oauth2.Config, error) {
	id, ok := lookup(s.ClientIDEnv)
	if !ok || id == "" {
		return nil, &ConfigError{msg: fmt.Sprintf("environment variable %s is not set; export the app registration's client id there", s.ClientIDEnv)}
	}
	var secret string
	if s.ClientSecretEnv != "" {
		if secret, ok = lookup(s.ClientSecretEnv); !ok || secret == "" {
			return nil, &ConfigError{msg: fmt.Sprintf("environment variable %s is not set; export the app registration's client secret there", s.ClientSecretEnv)}
		}
	}
	ep, _ := s.Endpoint()
	return &oauth2.Config{ClientID: id, ClientSecret: secret, Endpoint: ep, RedirectURL: redirectURL, Scopes: s.ScopeList()}, nil
}

// ConfigError is a setting missing from the environment: configuration,
// exit 2. Its text names variables, never their values.
type ConfigError struct{ msg string }

func (e *ConfigError) Error() string { return e.msg }
