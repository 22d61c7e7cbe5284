package sequence

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/rindactl/rindactl/internal/redact"
)

// Stages of a mailbox login, as `rindactl mailbox test` names them.
const (
	LoginStagePassword = "password" // the password's environment variable is not set
	LoginStageOAuth    = "oauth"    // no access token (not authorized, revoked grant, provider)
	LoginStageDNS      = "DNS"
	LoginStageTCP      = "TCP"
	LoginStageTLS      = "TLS" // handshake, certificate, tls_ca file, STARTTLS missing
	LoginStageAuth     = "AUTH"
	LoginStageSession  = "session" // the server refused the session otherwise
)

// LoginError is a failed login to a mailbox's SMTP or IMAP server, with
// the stage it failed at. Err is redacted: it never holds the password.
type LoginError struct {
	Protocol string // "smtp" or "imap"
	Stage    string
	Err      error
}

func (e *LoginError) Error() string { return e.Protocol + " " + e.Stage + ": " + e.Err.Error() }

// MissingCredentialError: the environment variable that holds a mailbox's
// password is not set (or empty) in this process.
type MissingCredentialError struct {
	Address string
	Env     string
}

func (e *MissingCredentialError) Error() string {
	return fmt.Sprintf("mailbox %s: environment variable %s is not set; export the SMTP password there", e.Address, e.Env)
}

// TLSCAError: a mailbox's tls_ca file cannot be read or holds no PEM
// certificate.
type TLSCAError struct {
	Address string
	Path    string
	Err     error
}

func (e *TLSCAError) Error() string {
	return fmt.Sprintf("mailbox %s: tls_ca %s: %v", e.Address, e.Path, e.Err)
}

func (e *TLSCAError) Unwrap() error { return e.Err }

// ClassifyLogin names the stage err failed a login at, from the error
// itself (before any redaction hides its chain); authRefused says the
// caller already knows the server refused the credentials. The message
// is redacted of secrets and, for a certificate, names its subject and
// issuer.
func ClassifyLogin(protocol string, err error, authRefused bool, secrets ...string) *LoginError {
	le := &LoginError{Protocol: protocol, Stage: loginStage(err, authRefused)}
	msg := err.Error()
	// A DeliveryError's own prefix ("smtp mailbox_refused: ") is the
	// tick's wording, not a login stage.
	var de *DeliveryError
	if errors.As(err, &de) && de.Err != nil {
		msg = de.Err.Error()
	}
	if cert := badCertificate(err); cert != nil {
		msg += fmt.Sprintf(" (server certificate subject %q, issuer %q)", cert.Subject.String(), cert.Issuer.String())
	}
	le.Err = redact.Error(errors.New(msg), secrets...)
	return le
}

func loginStage(err error, authRefused bool) string {
	var (
		missing *MissingCredentialError
		ca      *TLSCAError
		dns     *net.DNSError
	)
	switch {
	case errors.As(err, &missing):
		return LoginStagePassword
	case errors.As(err, &ca), tlsFailure(err):
		return LoginStageTLS
	case authRefused:
		return LoginStageAuth
	}
	if stage := deliveryStage(err); stage != "" {
		return stage
	}
	if errors.As(err, &dns) {
		return LoginStageDNS
	}
	return LoginStageTCP
}

// deliveryStage is the stage of an SMTP reply or a credential failure, ""
// when err is neither.
func deliveryStage(err error) string {
	var de *DeliveryError
	switch {
	case !errors.As(err, &de):
		return ""
	case de.Code == 535 || de.Enhanced == "5.7.8":
		return LoginStageAuth
	case de.Code == 0 && (de.Kind == DeliveryMailboxAuthRevoked || de.Kind == DeliveryMailboxAuthFailed):
		return LoginStageOAuth
	case de.Code != 0:
		return LoginStageSession
	}
	return ""
}

// tlsFailure: the handshake failed, or the server offered no STARTTLS
// to a mailbox that requires it.
func tlsFailure(err error) bool {
	var (
		rec   tls.RecordHeaderError
		alert tls.AlertError
	)
	return untrustedCertificate(err) || errors.As(err, &rec) || errors.As(err, &alert) ||
		noStartTLSOffered(err) || strings.Contains(err.Error(), "did not offer STARTTLS")
}

// badCertificate is the server certificate a TLS verification refused.
func badCertificate(err error) *x509.Certificate {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &verify) && len(verify.UnverifiedCertificates) > 0:
		return verify.UnverifiedCertificates[0]
	case errors.As(err, &unknown):
		return unknown.Cert
	case errors.As(err, &hostname):
		return hostname.Certificate
	case errors.As(err, &invalid):
		return invalid.Cert
	}
	return nil
}
