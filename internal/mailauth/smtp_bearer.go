package mailauth

import (
	"slices"
	"strconv"

	"github.com/wneessen/go-mail/smtp"
)

// NewSMTPBearer is the SMTP login with an OAuth2 access token: XOAUTH2
// where the server offers it (Google, Microsoft) or offers neither, else
// OAUTHBEARER (RFC 7628). go-mail has XOAUTH2 only.
func NewSMTPBearer(user, token, host string, port int) smtp.Auth {
	return &smtpBearer{user: user, token: token, host: host, port: port}
}

type smtpBearer struct {
	user, token, host string
	port              int
	mech              string
}

func (a *smtpBearer) Start(server *smtp.ServerInfo) (string, []byte, error) {
	if slices.Contains(server.Auth, OAUTHBEARER) && !slices.Contains(server.Auth, XOAUTH2) {
		a.mech = OAUTHBEARER
		return a.mech, []byte("n,a=" + a.user + ",\x01host=" + a.host + "\x01port=" + strconv.Itoa(a.port) + "\x01auth=Bearer " + a.token + "\x01\x01"), nil
	}
	a.mech = XOAUTH2
	return a.mech, []byte("user=" + a.user + "\x01auth=Bearer " + a.token + "\x01\x01"), nil
}

// Next answers the server's error challenge, after which it fails the
// command (535): with an empty line for XOAUTH2 (Google's documented
// answer), with ^A for OAUTHBEARER (RFC 7628).
func (a *smtpBearer) Next(_ []byte, more bool) ([]byte, error) {
	switch {
	case !more:
		return nil, nil
	case a.mech == OAUTHBEARER:
		return []byte{0x01}, nil
	}
	return []byte{}, nil
}
