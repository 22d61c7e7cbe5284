package sequence

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// TLSConfig is the TLS configuration for this mailbox's server at
// serverName: base (or TLS 1.2 and the system roots), and with tls_ca set,
// the system roots plus that CA. SSL_CERT_FILE would replace the system
// bundle for every connection of the process (SMTP, IMAP, providers); a
// mailbox's tls_ca adds to it for that mailbox alone. A tls_ca that cannot
// be read or holds no certificate is a *DeliveryError of kind
// DeliveryMailboxRefused: the mailbox pauses, no lead fails.
func (mb Mailbox) TLSConfig(base *tls.Config, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		cfg = base.Clone()
	}
	cfg.ServerName = serverName
	if mb.TLSCA == "" {
		return cfg, nil
	}
	refused := func(err error) error {
		return &DeliveryError{Kind: DeliveryMailboxRefused, Phase: PhaseConnect, Err: &TLSCAError{Address: mb.Address, Path: mb.TLSCA, Err: err}}
	}
	pem, err := os.ReadFile(mb.TLSCA)
	if err != nil {
		return nil, refused(errors.Unwrap(err))
	}
	roots := cfg.RootCAs
	if roots == nil {
		if roots, err = x509.SystemCertPool(); err != nil {
			roots = x509.NewCertPool()
		}
	} else {
		roots = roots.Clone()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, refused(errors.New("no PEM certificate in the file"))
	}
	cfg.RootCAs = roots
	return cfg, nil
}

// startTLSMissing is the failure of a mailbox that requires TLS (?tls=
// required, or a login on a host that is not loopback) on a server whose
// EHLO offers no STARTTLS: the server lost it, or someone on the path
// stripped it (a downgrade). Nothing was sent in clear, not even AUTH, and
// no retry helps until it is fixed: like an untrusted certificate, the
// mailbox pauses (DeliveryMailboxRefused) and no lead is charged.
func (mb Mailbox) startTLSMissing() error {
	return &DeliveryError{Kind: DeliveryMailboxRefused, Phase: PhaseConnect,
		Err: fmt.Errorf("mailbox %s: server %s did not offer STARTTLS; the mailbox requires TLS, so nothing was sent (a server without TLS, or STARTTLS stripped on the path)", mb.Address, mb.SMTP.Addr())}
}

// noStartTLSOffered reports go-mail's refusal of a TLSMandatory session
// whose EHLO lacks STARTTLS. go-mail (v0.8.1, Client.tls) has no sentinel
// error for it, only this text; TestTickStrippedStartTLSPausesTheMailbox
// fails if a new version words it otherwise.
func noStartTLSOffered(err error) bool {
	return strings.Contains(err.Error(), "target host does not support STARTTLS")
}
