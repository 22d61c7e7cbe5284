package inbox

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/rindactl/rindactl/internal/sequence"
)

// ProbeOptions configures Probe.
type ProbeOptions struct {
	// TLSConfig overrides the TLS settings (tests trust their own CA).
	TLSConfig *tls.Config
	// LookupEnv reads password_env variables; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Tokens hands out oauth2 mailboxes' access tokens.
	Tokens sequence.OAuthTokens
	// Timeout bounds the whole session.
	Timeout time.Duration
}

// Probe logs in to mb's IMAP server the way the inbox tick does (connect,
// TLS or STARTTLS, LOGIN or AUTHENTICATE XOAUTH2, EXAMINE INBOX), then
// logs out having read nothing. A failure is a *sequence.LoginError
// labelled imap, naming its stage, with the password redacted.
func Probe(ctx context.Context, mb sequence.Mailbox, opts ProbeOptions) error {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	t := &inboxTick{opts: TickOptions{TLSConfig: opts.TLSConfig, LookupEnv: opts.LookupEnv, Tokens: opts.Tokens}}
	cred, err := t.credential(ctx, mb)
	if err != nil {
		return sequence.ClassifyLogin("imap", err, false)
	}
	r, err := t.open(ctx, mb, time.Now().Add(opts.Timeout))
	if err != nil {
		return sequence.ClassifyLogin("imap", err, isLoginRefusal(err), cred.secret)
	}
	r.close()
	return nil
}

// isLoginRefusal: the server answered the login with NO or BAD (not a
// dropped connection, not a refused EXAMINE).
func isLoginRefusal(err error) bool {
	var e *imap.Error
	return errors.Is(err, errLogin) && errors.As(err, &e)
}
