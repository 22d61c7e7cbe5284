package sequence

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// TLSMode says how a connection to an SMTP server is protected.
type TLSMode string

const (
	// TLSOpportunistic upgrades with STARTTLS when the server offers it.
	// Credentials are never sent in clear to a non-loopback host: a mailbox
	// with a user on such a host is upgraded to TLSRequired.
	TLSOpportunistic TLSMode = "opportunistic"
	// TLSRequired fails the connection when STARTTLS is not offered.
	TLSRequired TLSMode = "required"
	// TLSImplicit speaks TLS from the first byte (smtps://).
	TLSImplicit TLSMode = "implicit"
)

const (
	// SubmissionPortDefault is the port of smtp:// URLs without one.
	SubmissionPortDefault = 587
	// SubmissionsPortDefault is the port of smtps:// URLs without one.
	SubmissionsPortDefault = 465
)

// SMTPEndpoint is a parsed smtp_url. It never holds a password.
type SMTPEndpoint struct {
	Host     string
	Port     int
	Username string
	TLS      TLSMode
}

// ParseSMTPURL parses smtp://[user@]host[:port][?tls=required|opportunistic]
// or smtps://[user@]host[:port]. A password in the URL is rejected: it
// belongs in the environment variable named by password_env.
func ParseSMTPURL(raw string) (SMTPEndpoint, error) {
	if raw == "" {
		return SMTPEndpoint{}, errors.New("required (smtp://user@host:587 or smtps://user@host:465)")
	}
	m, query, err := parseMailURL(raw, smtpURLRules)
	if err != nil {
		return SMTPEndpoint{}, err
	}
	ep := SMTPEndpoint(m)
	for key, vals := range query {
		if key != "tls" {
			return SMTPEndpoint{}, fmt.Errorf("unknown query parameter %q; only tls=required|opportunistic is allowed", key)
		}
		switch mode := TLSMode(strings.Join(vals, ",")); {
		case ep.TLS == TLSImplicit:
			return SMTPEndpoint{}, errors.New("tls= applies to smtp:// only; smtps:// is always TLS")
		case mode == TLSRequired || mode == TLSOpportunistic:
			ep.TLS = mode
		default:
			return SMTPEndpoint{}, fmt.Errorf("tls=%q: use tls=required or tls=opportunistic", mode)
		}
	}
	if ep.Username != "" && ep.TLS == TLSOpportunistic && !ep.Loopback() {
		ep.TLS = TLSRequired
	}
	return ep, nil
}

var smtpURLRules = mailURLRules{
	schemes:  [2]mailScheme{{"smtp", TLSOpportunistic, SubmissionPortDefault}, {"smtps", TLSImplicit, SubmissionsPortDefault}},
	expected: "smtp://user@host:587 or smtps://user@host:465",
	query:    true,
	hasPath:  "has a path; only scheme, user, host, port and ?tls= are allowed",
}

// Loopback reports whether the server is on this machine, the only place a
// connection may stay in clear with credentials.
func (e SMTPEndpoint) Loopback() bool {
	if e.Host == "localhost" {
		return true
	}
	ip := net.ParseIP(e.Host)
	return ip != nil && ip.IsLoopback()
}

// Addr is host:port.
func (e SMTPEndpoint) Addr() string {
	return net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// String renders the endpoint back as a URL (it has no password to leak).
func (e SMTPEndpoint) String() string {
	u := url.URL{Scheme: "smtp", Host: e.Addr()}
	if e.TLS == TLSImplicit {
		u.Scheme = "smtps"
	}
	if e.Username != "" {
		u.User = url.User(e.Username)
	}
	if e.TLS == TLSRequired {
		u.RawQuery = "tls=required"
	}
	return u.String()
}
