package mailauth

import "github.com/emersion/go-sasl"

// XOAUTH2 is the SASL mechanism Google and Microsoft take for SMTP and IMAP
// with an OAuth2 access token (developers.google.com/gmail/imap/xoauth2-protocol).
const XOAUTH2 = "XOAUTH2"

// OAUTHBEARER is RFC 7628's mechanism, taken where a server offers it and
// not XOAUTH2.
const OAUTHBEARER = sasl.OAuthBearer

// NewOAuthBearerClient is an OAUTHBEARER sasl.Client for IMAP: go-sasl's,
// except that it answers the server's error challenge with RFC 7628's ^A
// (go-sasl's returns an error without answering, leaving the command open
// and the server's NO unread).
func NewOAuthBearerClient(user, token, host string, port int) sasl.Client {
	return oauthBearerClient{sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: user, Token: token, Host: host, Port: port})}
}

type oauthBearerClient struct{ sasl.Client }

func (c oauthBearerClient) Next([]byte) ([]byte, error) { return []byte{0x01}, nil }

// NewXOAUTH2Client is a sasl.Client for IMAP (go-imap's Authenticate);
// SMTP uses go-mail's own XOAUTH2.
func NewXOAUTH2Client(user, token string) sasl.Client {
	return &xoauth2Client{user: user, token: token}
}

type xoauth2Client struct{ user, token string }

func (c *xoauth2Client) Start() (string, []byte, error) {
	return XOAUTH2, []byte("user=" + c.user + "\x01auth=Bearer " + c.token + "\x01\x01"), nil
}

// Next answers the server's error challenge (a JSON status), after which
// the server fails the command with its own words. The answer is one ^A
// byte (RFC 7628's dummy response), not an empty one: go-imap sends an
// empty response as "=", which is only valid as an initial response, and
// Dovecot answers it BAD, hiding the refusal (its NO) that tells the inbox
// tick to refresh the token.
func (c *xoauth2Client) Next([]byte) ([]byte, error) { return []byte{0x01}, nil }
