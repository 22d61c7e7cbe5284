package sequence

import (
	"context"
)

// Probe logs in to mb's SMTP server the way Send does (connect, TLS or
// STARTTLS, EHLO, AUTH) and quits without a MAIL FROM: nothing is sent.
// A failure is a *LoginError naming its stage, with the mailbox's
// password redacted from the server's words. As Send does, an oauth2
// mailbox whose cached access token the server refuses logs in once more
// with a refreshed one, so the probe reports what the next tick will meet.
func (m *Mailer) Probe(ctx context.Context, mb Mailbox) error {
	hard, _ := ctx.Deadline()
	conn := &mailboxConn{}
	err := m.dial(ctx, mb, conn, hard)
	if err != nil && m.tokenRefused(ctx, mb, conn, ClassifyDelivery(&PhaseError{Phase: PhaseConnect, Err: err})) {
		err = m.dial(ctx, mb, conn, hard)
	}
	if err == nil {
		conn.wire.phase(m.opts.Timeout, hard)
		err = conn.client.CloseWithSMTPClient(conn.smtp)
		_ = conn.smtp.Close()
		if err == nil {
			return nil
		}
	}
	var password string
	if mb.PasswordEnv != "" {
		password, _ = m.opts.LookupEnv(mb.PasswordEnv)
	}
	return ClassifyLogin("smtp", ClassifyDelivery(&PhaseError{Phase: PhaseConnect, Err: err}), false, password)
}
