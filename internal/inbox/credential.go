package inbox

import (
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/sequence"
)

// credential is what a mailbox signs in to IMAP with: a password (LOGIN),
// or an OAuth2 access token (AUTHENTICATE XOAUTH2).
type credential struct {
	secret  string
	xoauth2 bool
}

// login signs in as ep's user. An access token goes with XOAUTH2 (Google,
// Microsoft), or OAUTHBEARER (RFC 7628) where a server offers only that.
func (c credential) login(client *imapclient.Client, ep sequence.IMAPEndpoint) error {
	caps := client.Caps()
	switch {
	case !c.xoauth2:
		return client.Login(ep.Username, c.secret).Wait()
	case caps.Has("AUTH="+mailauth.OAUTHBEARER) && !caps.Has("AUTH="+mailauth.XOAUTH2):
		return client.Authenticate(mailauth.NewOAuthBearerClient(ep.Username, c.secret, ep.Host, ep.Port))
	}
	return client.Authenticate(mailauth.NewXOAUTH2Client(ep.Username, c.secret))
}
