package sequence

import (
	"errors"
	"fmt"
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
	u, err := url.Parse(raw)
	if err != nil {
		return IMAPEndpoint{}, errors.New("not a URL (expected imaps://user@host:993)")
	}
	if _, has := u.User.Password(); has {
		return IMAPEndpoint{}, errors.New("the URL holds a password; remove it and name an environment variable in password_env")
	}
	ep := IMAPEndpoint{Host: u.Hostname(), Username: u.User.Username()}
	if ep.Username == "" {
		ep.Username = address
	}
	switch u.Scheme {
	case "imaps":
		ep.TLS, ep.Port = TLSImplicit, IMAPSPortDefault
	case "imap":
		ep.TLS, ep.Port = TLSRequired, IMAPPortDefault
	default:
		return IMAPEndpoint{}, fmt.Errorf("scheme %q is not imaps or imap", u.Scheme)
	}
	if ep.Host == "" {
		return IMAPEndpoint{}, fmt.Errorf("%q has no host", raw)
	}
	if u.Path != "" && u.Path != "/" || u.Fragment != "" || u.Opaque != "" || u.RawQuery != "" {
		return IMAPEndpoint{}, fmt.Errorf("%q has a path or query; only scheme, user, host and port are allowed", raw)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return IMAPEndpoint{}, fmt.Errorf("%q has an invalid port", raw)
		}
		ep.Port = n
	}
	if ep.TLS == TLSRequired && (SMTPEndpoint{Host: ep.Host}).Loopback() {
		ep.TLS = TLSOpportunistic
	}
	return ep, nil
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
