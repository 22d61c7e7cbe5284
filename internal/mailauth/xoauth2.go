package mailauth

import "github.com/emersion/go-sasl"

// XOAUTH2 is the SASL mechanism Google and Microsoft take for SMTP and IMAP
// with an OAuth2 access token (developers.google.com/gmail/imap/xoauth2-protocol).
const XOAUTH2 = "XOAUTH2"

// NewXOAUTH2Client is a sasl.Client for IMAP (go-imap's Authenticate);
// SMTP uses go-mail's own XOAUTH2.
func NewXOAUTH2Client(user, token string) sasl.Client {
	return &xoauth2Client{user: user, token: token}
}

type xoauth2Client struct{ user, token string }

func (c *xoauth2Client) Start() (string, []byte, error) {
	return XOAUTH2, []byte("user=" + c.user + "\x01auth=Bearer " + c.token + "\x01\x01"), nil
}

// Next answers the server's error challenge (a JSON status) with an empty
// response, after which the server fails the command with its own words.
func (c *xoauth2Client) Next([]byte) ([]byte, error) { return []byte{}, nil }
