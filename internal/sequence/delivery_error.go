package sequence

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/textproto"
	"regexp"
	"strings"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/faults"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/tick"
)

// DeliveryKind is what an SMTP failure means for the sequence.
type DeliveryKind string

const (
	// DeliveryTransient: connection failures and 4xx replies (greylisting);
	// the step is retried after a backoff.
	DeliveryTransient DeliveryKind = "transient"
	// DeliveryMailboxQuota: the provider's sending quota for this mailbox is
	// used up (Gmail 550 5.4.5, Microsoft 554 5.2.0); pause the mailbox.
	DeliveryMailboxQuota DeliveryKind = "mailbox_quota"
	// DeliveryMailboxThrottled: reputation throttling (421 4.7.0, 4.7.28);
	// pause the mailbox for hours.
	DeliveryMailboxThrottled DeliveryKind = "mailbox_throttled"
	// DeliveryMailboxAuthFailed: the server refused the login (535, 5.7.8)
	// or the password's variable is not set on this host. The mailbox
	// pauses, with a mailbox_paused event; a fixed password is picked up
	// by the first tick after the pause.
	DeliveryMailboxAuthFailed DeliveryKind = "mailbox_auth_failed"
	// DeliveryMailboxRefused: the server refused this client's session (a
	// 5xx to the greeting, EHLO/HELO, STARTTLS or AUTH other than a failed
	// login) or its sender (a 5xx to MAIL FROM), its certificate is not
	// trusted, or the mailbox's stored configuration does not validate:
	// usually this side's configuration (the greeting name, tls_ca, the
	// address the account may send as). The mailbox pauses, with a
	// mailbox_paused event, and resumes by itself once fixed.
	DeliveryMailboxRefused DeliveryKind = "mailbox_refused"
	// DeliveryBounced: the recipient address does not exist (550 5.1.1,
	// 553 5.1.3); the enrollment ends and the address is suppressed.
	DeliveryBounced DeliveryKind = DeliveryKind(enrollment.Bounced)
	// DeliveryRejected: any other permanent refusal of this message; the
	// enrollment ends without suppressing the address.
	DeliveryRejected DeliveryKind = "rejected"
	// DeliveryUnknown: the final dot went out and no answer came back (the
	// server dropped the connection or timed out). The server may have
	// accepted the message: it is never resent automatically.
	DeliveryUnknown DeliveryKind = DeliveryKind(enrollment.DeliveryUnknown)
	// DeliveryCancelled: the tick's own deadline cut the session before the
	// final dot, with no reply. It says nothing about the mailbox or the
	// lead: the rows go back due as before, with no attempt, pause or
	// backoff. A server's phase timeout reached first stays transient.
	DeliveryCancelled DeliveryKind = "cancelled"
)

const (
	// MailboxQuotaPauseDefault: provider quotas reset daily.
	MailboxQuotaPauseDefault = 24 * time.Hour
	// MailboxThrottlePauseDefault: reputation limits lift within hours.
	MailboxThrottlePauseDefault = 4 * time.Hour
	// MailboxRefusedPauseDefault: a refused session, sender or login (a
	// greeting name, a certificate, a password) waits for an operator's
	// fix; one attempt an hour, so a fix needs no other action and a
	// wrong password is not tried often enough to lock the account.
	MailboxRefusedPauseDefault = time.Hour
	// TransientBackoffBaseDefault is the first retry delay after a
	// transient failure; it doubles with each attempt.
	TransientBackoffBaseDefault = 5 * time.Minute
	// TransientBackoffMaxDefault caps the transient backoff.
	TransientBackoffMaxDefault = 6 * time.Hour
)

// DeliveryError is a classified SMTP failure. Its message carries the
// server's reply, never credentials.
type DeliveryError struct {
	Kind DeliveryKind
	// Code and Enhanced are the server's reply codes, when it replied;
	// Enhanced is read from the reply text when the server does not
	// advertise ENHANCEDSTATUSCODES.
	Code     int
	Enhanced string
	// Phase is where it failed, when known.
	Phase Phase
	// Cut: the reply passed its bound (ReplyTooLongError) and was not read
	// to its end, so the connection cannot be used again.
	Cut bool
	// TickCut: the tick's deadline or a signal closed the session before
	// any reply (DeliveryCancelled, or DeliveryUnknown after the final
	// dot): the server did not fail, so the mailbox's other rows are left
	// as they were.
	TickCut bool
	// RevokedSince: for DeliveryMailboxAuthRevoked, when the episode of
	// the revoked grant began (it keys the episode's one event).
	RevokedSince time.Time
	Err          error
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("smtp %s: %v", e.Kind, e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// ConnLost reports whether the failure left no usable connection: no SMTP
// reply at all, a reply cut at its bound, or 421 (the server is closing
// it). A message refused before it reached the server (it cannot be
// built, or needs SMTPUTF8 the server lacks) leaves the connection as it
// was.
func (e *DeliveryError) ConnLost() bool {
	return e.Cut || e.Code == 421 || e.Code == 0 && e.Kind != DeliveryRejected
}

// PausesMailbox reports whether the failure is the mailbox's, not the
// lead's, and for how long the mailbox should rest. None disables it: an
// operator's fix is picked up by the first tick after the pause.
func (e *DeliveryError) PausesMailbox() (bool, time.Duration) {
	switch e.Kind {
	case DeliveryMailboxQuota:
		return true, MailboxQuotaPauseDefault
	case DeliveryMailboxThrottled:
		return true, MailboxThrottlePauseDefault
	case DeliveryMailboxRefused, DeliveryMailboxAuthFailed, DeliveryMailboxAuthRevoked:
		return true, MailboxRefusedPauseDefault
	}
	return false, 0
}

// TransientBackoff is the delay before retry number attempt (1-based).
func TransientBackoff(attempt int) time.Duration {
	return tick.Backoff(attempt, TransientBackoffBaseDefault, TransientBackoffMaxDefault)
}

var enhancedCodePattern = regexp.MustCompile(`\b([245]\.\d{1,3}\.\d{1,3})\b`)

// Reply texts that name the cause when the enhanced code does not. A full
// recipient mailbox ("over quota") is the lead's problem, not the sender's,
// so it is matched first.
var (
	recipientFullPattern = regexp.MustCompile(`(?i)over quota|mailbox (is )?full|insufficient (system )?storage|exceeded storage`)
	sendQuotaPattern     = regexp.MustCompile(`(?i)quota|sending limit|daily (user )?(sending )?limit|per day`)
	throttlePattern      = regexp.MustCompile(`(?i)rate limit|rate exceeded|sending rate|too many|throttl|unexpected volume|per hour`)
	greylistPattern      = regexp.MustCompile(`(?i)gr[ae]y ?list`)
)

// ClassifyDelivery turns an error from dialing or sending into a
// DeliveryError. It reads go-mail's SendError, a bare textproto reply and
// the Mailer's PhaseError alike; when the server gives no enhanced code the
// reply text decides. Unknown errors (network, TLS, timeouts) are
// transient, except after the final dot, where they are DeliveryUnknown.
func ClassifyDelivery(err error) *DeliveryError {
	if err == nil {
		return nil
	}
	var de *DeliveryError
	if errors.As(err, &de) {
		return de
	}
	r := readReply(err)
	kind := r.kind(r.code == 0 && untrustedCertificate(err))
	return &DeliveryError{Kind: kind, Code: r.code, Enhanced: r.enhanced, Phase: r.phase, Cut: r.cut, Err: err}
}

// kind is what the reply means; untrusted: the TLS handshake found the
// server's certificate untrusted (there was no reply). The order matters:
// a full recipient mailbox is the lead's problem whatever its words, and
// the mailbox's own failures come before a lead's bounce.
func (r reply) kind(untrusted bool) DeliveryKind {
	switch {
	case r.code == 0:
		return noReplyKind(r.phase, untrusted)
	case r.enhanced == "4.2.2" || r.enhanced == "5.2.2" || recipientFullPattern.MatchString(r.text):
		if r.code >= 500 {
			return DeliveryRejected
		}
		return DeliveryTransient
	}
	if kind, ok := r.mailboxKind(); ok {
		return kind
	}
	switch {
	case isBounceCode(r.enhanced), r.code >= 550 && r.code <= 553 && r.enhanced == "" && r.phase == PhaseRcpt:
		return DeliveryBounced
	case r.code >= 500:
		return DeliveryRejected
	}
	return DeliveryTransient
}

// noReplyKind is a failure without any reply: connection refused,
// dropped, timed out.
func noReplyKind(phase Phase, untrusted bool) DeliveryKind {
	switch {
	case untrusted:
		// Retrying changes nothing until the mailbox's tls_ca (or the
		// server's certificate) is fixed: the mailbox's problem, not a lead's.
		return DeliveryMailboxRefused
	case phase == PhaseDataEnd && !faults.On(faults.Once):
		return DeliveryUnknown
	}
	return DeliveryTransient
}

// mailboxKind is a reply about the sending mailbox rather than the lead:
// its quota, its credentials, its rate, its session or its sender address.
func (r reply) mailboxKind() (DeliveryKind, bool) {
	switch {
	case r.enhanced == "5.4.5", r.code == 554 && r.enhanced == "5.2.0", sendQuotaPattern.MatchString(r.text):
		return DeliveryMailboxQuota, true
	case r.code == 535 || r.enhanced == "5.7.8":
		return DeliveryMailboxAuthFailed, true
	case r.enhanced == "4.7.28", r.code == 421 && r.enhanced == "4.7.0", throttlePattern.MatchString(r.text),
		strings.HasPrefix(r.enhanced, "4.7.") && !greylistPattern.MatchString(r.text):
		return DeliveryMailboxThrottled, true
	case r.code >= 500 && (r.phase == PhaseConnect || r.phase == PhaseMail):
		// The session itself was refused (greeting, EHLO/HELO, STARTTLS,
		// AUTH) or its sender (MAIL FROM: even a 5.1.x code there is the
		// mailbox's, never a bounce of the lead): nothing about a lead
		// was said yet.
		return DeliveryMailboxRefused, true
	}
	return "", false
}

// untrustedCertificate reports a TLS handshake that failed verifying the
// server's certificate (unknown authority, wrong name, expired).
func untrustedCertificate(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// cutByTick tells a failure without any reply that came once hard, the
// tick's deadline, had passed, or once ctx ended (a signal's grace closes
// the connection): the tick cut the session, the server did not fail it.
// Before the final dot it is DeliveryCancelled; after it, it stays
// DeliveryUnknown (the server may have the message) and is marked TickCut.
// Either way the error names the cut, not the closed connection it shows
// as ("use of closed network connection", "i/o timeout").
func cutByTick(ctx context.Context, de *DeliveryError, hard time.Time) *DeliveryError {
	if de.Code != 0 || de.Kind != DeliveryTransient && de.Kind != DeliveryUnknown {
		return de
	}
	signalled := errors.Is(ctx.Err(), context.Canceled)
	if ctx.Err() == nil && (hard.IsZero() || time.Now().Before(hard)) {
		return de
	}
	if de.Kind == DeliveryTransient {
		de.Kind = DeliveryCancelled
	}
	de.TickCut = true
	var cut error = &tickCutError{signal: signalled, cause: de.Err}
	if de.Phase != "" {
		cut = &PhaseError{Phase: de.Phase, Err: cut}
	}
	de.Err = cut
	return de
}

// tickCutError is a session the tick closed itself; cause is what the
// connection reported.
type tickCutError struct {
	signal bool
	cause  error
}

func (e *tickCutError) Error() string {
	if e.signal {
		return "no reply before a signal stopped the tick and its grace closed the connection"
	}
	return "no reply before the tick's deadline (--max-duration plus the SMTP grace) closed the connection"
}

func (e *tickCutError) Unwrap() error { return e.cause }

func isBounceCode(enhanced string) bool {
	switch enhanced {
	case "5.1.1", "5.1.2", "5.1.3", "5.1.6", "5.1.10":
		return true
	}
	return false
}

// reply is what a failure tells about the server's answer.
type reply struct {
	code     int
	enhanced string
	// text is at most redact.StoredMax bytes: the patterns read what is
	// stored, and a huge reply costs no more than a short one.
	text  string
	phase Phase
	cut   bool
}

// readReply digs the SMTP reply out of a PhaseError, go-mail's SendError
// or a bare textproto error (as AUTH and the greeting return).
func readReply(err error) reply {
	var r reply
	var pe *PhaseError
	if errors.As(err, &pe) {
		r.phase = pe.Phase
	}
	var se *mail.SendError
	if errors.As(err, &se) {
		if r.phase == "" {
			r.phase = sendErrPhase(se.Reason)
		}
		r.code, r.enhanced = se.ErrorCode(), se.EnhancedStatusCode()
		if r.code != 0 {
			// go-mail keeps the code only when the reply starts with it.
			r.text = se.Error()
		}
	}
	var te *textproto.Error
	if errors.As(err, &te) {
		r.code, r.text = te.Code, te.Msg
	}
	var tl *ReplyTooLongError
	if errors.As(err, &tl) {
		r.code, r.text, r.cut = tl.Code, tl.Text, true
	}
	if r.code == 0 {
		return reply{phase: r.phase, cut: r.cut}
	}
	r.text = redact.Clip(r.text, redact.StoredMax)
	if r.enhanced == "" {
		r.enhanced = enhancedCodePattern.FindString(r.text)
	}
	return r
}

func sendErrPhase(reason mail.SendErrReason) Phase {
	switch reason {
	case mail.ErrSMTPMailFrom, mail.ErrConnCheck:
		return PhaseMail
	case mail.ErrSMTPRcptTo:
		return PhaseRcpt
	case mail.ErrSMTPData, mail.ErrWriteContent:
		return PhaseData
	case mail.ErrSMTPDataClose:
		return PhaseDataEnd
	}
	return ""
}
