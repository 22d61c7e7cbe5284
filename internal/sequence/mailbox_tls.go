package sequence

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
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
		return &DeliveryError{Kind: DeliveryMailboxRefused, Phase: PhaseConnect, Err: fmt.Errorf("mailbox %s: tls_ca %s: %w", mb.Address, mb.TLSCA, err)}
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
