package inbox

import (
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/rindactl/rindactl/internal/mailauth"
)

// credential is what a mailbox signs in to IMAP with: a password (LOGIN),
// or an OAuth2 access token (AUTHENTICATE XOAUTH2).
type credential struct {
	secret  string
	xoauth2 bool
}

func (c credential) login(client *imapclient.Client, user string) error {
	if c.xoauth2 {
		return client.Authenticate(mailauth.NewXOAUTH2Client(user, c.secret))
	}
	return client.Login(user, c.secret).Wait()
}
