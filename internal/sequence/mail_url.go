package sequence

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
)

// mailEndpoint is what smtp_url and imap_url both hold once parsed; it
// converts to SMTPEndpoint and IMAPEndpoint.
type mailEndpoint struct {
	Host     string
	Port     int
	Username string
	TLS      TLSMode
}

// mailScheme is one URL scheme of a mail endpoint: its TLS mode and the
// port used when the URL names none.
type mailScheme struct {
	name string
	tls  TLSMode
	port int
}

// mailURLRules are what differ between the mail URLs: the two schemes, the
// example quoted when raw is not a URL, whether a query is allowed and the
// message that follows raw when a path is present.
type mailURLRules struct {
	schemes  [2]mailScheme
	expected string
	query    bool
	hasPath  string
}

// parseMailURL reads the scheme, user, host and port of a mail URL, with
// the rules SMTP and IMAP share: no password (it belongs in password_env),
// a host, no path and a port in range. It returns the query for the caller
// to read.
func parseMailURL(raw string, r mailURLRules) (mailEndpoint, url.Values, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url's error repeats the input, which may hold a password.
		return mailEndpoint{}, nil, fmt.Errorf("not a URL (expected %s)", r.expected)
	}
	if _, has := u.User.Password(); has {
		return mailEndpoint{}, nil, errors.New("the URL holds a password; remove it and name an environment variable in password_env")
	}
	ep := mailEndpoint{Host: u.Hostname(), Username: u.User.Username()}
	i := slices.IndexFunc(r.schemes[:], func(s mailScheme) bool { return s.name == u.Scheme })
	if i < 0 {
		return mailEndpoint{}, nil, fmt.Errorf("scheme %q is not %s or %s", u.Scheme, r.schemes[0].name, r.schemes[1].name)
	}
	ep.TLS, ep.Port = r.schemes[i].tls, r.schemes[i].port
	if ep.Host == "" {
		return mailEndpoint{}, nil, fmt.Errorf("%q has no host", raw)
	}
	if u.Path != "" && u.Path != "/" || u.Fragment != "" || u.Opaque != "" || !r.query && u.RawQuery != "" {
		return mailEndpoint{}, nil, fmt.Errorf("%q %s", raw, r.hasPath)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return mailEndpoint{}, nil, fmt.Errorf("%q has an invalid port", raw)
		}
		ep.Port = n
	}
	return ep, u.Query(), nil
}
