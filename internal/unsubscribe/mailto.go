package unsubscribe

import (
	"mime"
	"net/mail"
	"net/textproto"
	"net/url"
	"regexp"
	"strings"
)

// The mailto: alternative of List-Unsubscribe (RFC 2369) mails the sending
// mailbox itself with the token in the subject: every server delivers it,
// sub-addressing or not, and `inbox tick` reads it there. A message to a
// sub-address local+u.TOKEN@domain is recognised too, for operators who
// publish that form.

// mailtoSubject starts the subject of an unsubscribe mail.
const mailtoSubject = "unsubscribe "

// MailtoURL is the mailto: URL that unsubscribes the holder of token by
// mail to mailbox.
func MailtoURL(mailbox, token string) string {
	return (&url.URL{Scheme: "mailto", Opaque: mailbox, RawQuery: "subject=" + url.PathEscape(mailtoSubject+token)}).String()
}

var (
	subjectToken    = regexp.MustCompile(`(?i)\bunsubscribe\s+([a-z2-7]{40})\b`)
	subaddressToken = regexp.MustCompile(`(?i)\+u\.([a-z2-7]{40})@`)
	wordDecoder     = mime.WordDecoder{}
)

// ParseMailtoRequest recognises a message sent through a List-Unsubscribe
// mailto: URL: a Subject of "unsubscribe TOKEN" (after any Re:, in any
// case, RFC 2047 encoded or not), or a recipient local+u.TOKEN@domain in
// To, Delivered-To or X-Original-To. It returns the token in lower case;
// whether it is valid is Apply's to say.
func ParseMailtoRequest(h mail.Header) (string, bool) {
	subject := h.Get("Subject")
	if dec, err := wordDecoder.DecodeHeader(subject); err == nil {
		subject = dec
	}
	if m := subjectToken.FindStringSubmatch(subject); m != nil {
		return strings.ToLower(m[1]), true
	}
	for _, name := range []string{"To", "Delivered-To", "X-Original-To"} {
		for _, v := range h[textproto.CanonicalMIMEHeaderKey(name)] {
			if m := subaddressToken.FindStringSubmatch(v); m != nil {
				return strings.ToLower(m[1]), true
			}
		}
	}
	return "", false
}
