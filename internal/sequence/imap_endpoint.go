package sequence

import (
	"net"
	"net/url"
	"strconv"
)

// IMAP ports of imap_url without one.
const (
	IMAPPortDefault  = 143
	IMAPSPortDefault = 993
)

// IMAPEndpoint is a parsed imap_url: where `inbox tick` reads the mailbox's
// replies and bounces. It never holds a password (that is password_env's).
type IMAPEndpoint struct {
	Host     string
	Port     int
	Username string
	// TLS is TLSImplicit (imaps://) or TLSRequired (imap:// with STARTTLS);
	// TLSOpportunistic only for imap:// on a loopback host, which may stay
	// in clear, as for SMTP.
	TLS TLSMode
}

// ParseIMAPURL parses imaps://[user@]host[:993] or imap://[user@]host[:143].
// Without a user, the mailbox address logs in.
func ParseIMAPURL(raw, address string) (IMAPEndpoint, error) {
	m, _, err := parseMailURL(raw, imapURLRules)
	if err != nil {
		return IMAPEndpoint{}, err
	}
	ep := IMAPEndpoint(m)
	if ep.Username == "" {
		ep.Username = address
	}
	if ep.TLS == TLSRequired && (SMTPEndpoint{Host: ep.Host}).Loopback() {
		ep.TLS = TLSOpportunistic
	}
	return ep, nil
}

var imapURLRules = mailURLRules{
	schemes:  [2]mailScheme{{"imaps", TLSImplicit, IMAPSPortDefault}, {"imap", TLSRequired, IMAPPortDefault}},
	expected: "imaps://user@host:993",
	hasPath:  "has a path or query; only scheme, user, host and port are allowed",
}

// Addr is host:port.
func (e IMAPEndpoint) Addr() string {
	return net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// String renders the endpoint back as a URL (it has no password to leak).
func (e IMAPEndpoint) String() string {
	u := url.URL{Scheme: "imap", Host: e.Addr(), User: url.User(e.Username)}
	if e.TLS == TLSImplicit {
		u.Scheme = "imaps"
	}
	return u.String()
}
