package sequence

import (
	"errors"
	"fmt"
	"net/textproto"
	"regexp"
	"time"

	"github.com/wneessen/go-mail"

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
	// DeliveryMailboxDisabled: authentication failed (535 5.7.8) or the
	// server refuses the sender; an operator must fix the mailbox.
	DeliveryMailboxDisabled DeliveryKind = "mailbox_disabled"
	// DeliveryBounced: the recipient address does not exist (550 5.1.1,
	// 553 5.1.3); the enrollment ends and the address is suppressed.
	DeliveryBounced DeliveryKind = "bounced"
	// DeliveryRejected: any other permanent refusal of this message; the
	// enrollment ends without suppressing the address.
	DeliveryRejected DeliveryKind = "rejected"
)

const (
	// MailboxQuotaPauseDefault: provider quotas reset daily.
	MailboxQuotaPauseDefault = 24 * time.Hour
	// MailboxThrottlePauseDefault: reputation limits lift within hours.
	MailboxThrottlePauseDefault = 4 * time.Hour
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
	// Code and Enhanced are the server's reply codes, when it replied.
	Code     int
	Enhanced string
	Err      error
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("smtp %s: %v", e.Kind, e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// PausesMailbox reports whether the failure is the mailbox's, not the
// lead's, and for how long the mailbox should rest (0 = until an operator
// re-enables it).
func (e *DeliveryError) PausesMailbox() (bool, time.Duration) {
	switch e.Kind {
	case DeliveryMailboxQuota:
		return true, MailboxQuotaPauseDefault
	case DeliveryMailboxThrottled:
		return true, MailboxThrottlePauseDefault
	case DeliveryMailboxDisabled:
		return true, 0
	}
	return false, 0
}

// TransientBackoff is the delay before retry number attempt (1-based).
func TransientBackoff(attempt int) time.Duration {
	return tick.Backoff(attempt, TransientBackoffBaseDefault, TransientBackoffMaxDefault)
}

var enhancedCodePattern = regexp.MustCompile(`\b([245]\.\d{1,3}\.\d{1,3})\b`)

// ClassifyDelivery turns an error from dialing or sending into a
// DeliveryError. Unknown errors (network, TLS, timeouts) are transient.
func ClassifyDelivery(err error) *DeliveryError {
	if err == nil {
		return nil
	}
	var de *DeliveryError
	if errors.As(err, &de) {
		return de
	}
	code, enhanced, reason := replyCodes(err)
	kind := DeliveryTransient
	switch {
	case (code == 550 || code == 552) && enhanced == "5.4.5", code == 554 && enhanced == "5.2.0":
		kind = DeliveryMailboxQuota
	case enhanced == "4.7.28", code == 421 && enhanced == "4.7.0":
		kind = DeliveryMailboxThrottled
	case code == 535 || enhanced == "5.7.8":
		kind = DeliveryMailboxDisabled
	case isBounceCode(enhanced), code >= 550 && code <= 553 && enhanced == "" && reason == mail.ErrSMTPRcptTo:
		kind = DeliveryBounced
	case code >= 500 && reason == mail.ErrSMTPMailFrom:
		kind = DeliveryMailboxDisabled
	case code >= 500:
		kind = DeliveryRejected
	}
	return &DeliveryError{Kind: kind, Code: code, Enhanced: enhanced, Err: err}
}

func isBounceCode(enhanced string) bool {
	switch enhanced {
	case "5.1.1", "5.1.2", "5.1.3", "5.1.6", "5.1.10":
		return true
	}
	return false
}

// replyCodes digs the SMTP reply out of go-mail's SendError or a bare
// textproto error (as returned by AUTH).
func replyCodes(err error) (code int, enhanced string, reason mail.SendErrReason) {
	reason = -1
	var se *mail.SendError
	if errors.As(err, &se) {
		reason = se.Reason
		code, enhanced = se.ErrorCode(), se.EnhancedStatusCode()
		if code != 0 {
			return code, enhanced, reason
		}
	}
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code, enhancedCodePattern.FindString(te.Msg), reason
	}
	return code, enhanced, reason
}
