// Package inbox reads each mailbox's INBOX over IMAP and ends the sequences
// its messages answer: replies (In-Reply-To/References naming a Message-ID
// we sent) end as 'replied', or as 'unsubscribed' when their first lines
// ask for it; automatic answers (out of office, challenge-response, list
// mail) end nothing; delivery status notifications (RFC 3464) that prove
// they report a failed delivery of a message we sent end as 'bounced', and
// a permanent failure also suppresses the address. A message sent through
// a List-Unsubscribe mailto: URL carries an unsubscribe token and ends the
// address's sequences as 'unsubscribed' (unsubscribe.Apply).
//
// Anyone on the internet can put a message in an INBOX, so nothing here
// trusts one: a delivery report must be one at the top level, values are
// decoded and made valid UTF-8 before they reach SQL, and the tick acts on
// a report only for what it proves (bounce_proof.go).
package inbox

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"

	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// Kind is what a message means for our sequences.
type Kind string

// Kinds of inbox message, as counted in the tick's outcomes.
const (
	KindReply     Kind = "reply"
	KindBounce    Kind = "bounce"
	KindAutoReply Kind = "auto_reply" // out of office and the like: the thread goes on
	KindDelayed   Kind = "delayed"    // a DSN that only reports a delay
	KindOther     Kind = "other"
	// KindUnsubscribeMail: a message sent through the List-Unsubscribe
	// mailto: URL, carrying an unsubscribe token (internal/unsubscribe).
	KindUnsubscribeMail Kind = "unsubscribe_mail"
)

// Finding is what Classify learnt from one message. Every string is valid
// UTF-8 without NUL or other control characters.
type Finding struct {
	Kind Kind
	// MessageIDs are the Message-IDs (without angle brackets, printable
	// ASCII only: ours are) the message refers to: In-Reply-To and
	// References of a reply, the returned original's Message-ID of a bounce.
	MessageIDs []string
	// Recipients are the addresses a bounce reports as failed, lower case,
	// each once.
	Recipients []string
	// Failed is each recipient block of a bounce that reports a failure,
	// in order: what proves a recipient is checked against each on its own.
	Failed []FailedRecipient
	// EnvelopeTo are the addresses a bounce was delivered to (To,
	// Delivered-To, X-Original-To), lower case: a VERP return path shows
	// there.
	EnvelopeTo []string
	// Hard is true when a failure is permanent (status 5.x.x).
	Hard bool
	// Status is the first failed recipient's enhanced status code.
	Status string
	// Unsubscribe is true for a reply whose first lines ask to be removed.
	Unsubscribe bool
	// From is the sender as the message gives it, decoded, for events.
	From string
	// UnsubscribeToken is the token of a KindUnsubscribeMail.
	UnsubscribeToken string
}

// FailedRecipient is one recipient block of a delivery report whose
// Action is failed.
type FailedRecipient struct {
	// Final and Original are its Final-Recipient and Original-Recipient
	// addresses (RFC 3464), lower case, "" when absent or not an address:
	// a forwarded address fails at its Final-Recipient, while our send went
	// to its Original-Recipient.
	Final, Original string
	// Hard is true when its failure is permanent (status 5.x.x).
	Hard bool
}

// Names reports whether the block names address (lower case) either way.
func (r FailedRecipient) Names(address string) bool {
	return address != "" && (r.Final == address || r.Original == address)
}

// Bounds on what one message can make the tick do.
const (
	// messageIDsMax bounds the Message-IDs taken from a message: a thread's
	// References rarely name more than a few dozen.
	messageIDsMax = 100
	// reportIDsMax bounds the Message-IDs taken from a delivery report's
	// parts and headers together.
	reportIDsMax = 2 * messageIDsMax
	// recipientsMax bounds a delivery report's recipients (a 128 KiB
	// message holds about 3,000).
	recipientsMax = 5000
	// addressMax is RFC 5321's longest address.
	addressMax = 254
	fromMax    = 200
)

var msgIDPattern = regexp.MustCompile(`<([^<>\s]+)>`)

// Classify reads a raw RFC 5322 message (possibly truncated) and says
// whether it is a reply, a bounce or neither.
func Classify(raw []byte) Finding {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Finding{Kind: KindOther}
	}
	from := clip(headerText(msg.Header.Get("From")), fromMax)
	if isDeliveryReport(msg.Header.Get("Content-Type")) {
		return classifyReport(msg, from)
	}
	if token, ok := unsubscribe.ParseMailtoRequest(msg.Header); ok {
		return Finding{Kind: KindUnsubscribeMail, UnsubscribeToken: token, From: from}
	}
	ids := msgIDs(msg.Header.Get("In-Reply-To") + " " + msg.Header.Get("References"))
	switch {
	case isAutoReply(msg.Header):
		// Whatever it says ("stop" included): a machine wrote it.
		return Finding{Kind: KindAutoReply, MessageIDs: ids, From: from}
	case len(ids) == 0:
		return Finding{Kind: KindOther, From: from}
	}
	stop := asksToUnsubscribe(replySubject(headerText(msg.Header.Get("Subject"))),
		firstLines(textproto.MIMEHeader(msg.Header), msg.Body))
	return Finding{Kind: KindReply, MessageIDs: ids, From: from, Unsubscribe: stop}
}

// classifyReport reads a delivery report: its recipients, the Message-IDs
// it names (the returned original's, an Original-Message-ID field, its own
// In-Reply-To and References, which Gmail and Microsoft 365 set to the
// original's), and the addresses it was delivered to (a VERP return path
// shows there).
func classifyReport(msg *mail.Message, from string) Finding {
	var rep report
	rep.read(msg.Header.Get("Content-Type"), msg.Body)
	rep.original = append(rep.original, msgIDs(msg.Header.Get("In-Reply-To")+" "+msg.Header.Get("References")+" "+
		msg.Header.Get("Original-Message-Id")+" "+msg.Header.Get("X-Original-Message-Id"))...)
	f := rep.finding()
	f.From = from
	for _, h := range []string{"To", "Delivered-To", "X-Original-To"} {
		for _, v := range msg.Header[textproto.CanonicalMIMEHeaderKey(h)] {
			f.EnvelopeTo = appendAddresses(f.EnvelopeTo, headerText(v))
		}
	}
	return f
}

// isDeliveryReport requires what RFC 3464 requires at the top level:
// multipart/report; report-type=delivery-status (or RFC 6533's
// global-delivery-status). A delivery-status part anywhere else — an
// attachment of a multipart/mixed, a forwarded report — is not one.
func isDeliveryReport(contentType string) bool {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "multipart/report" || params["boundary"] == "" {
		return false
	}
	rt := strings.ToLower(params["report-type"])
	return rt == "delivery-status" || rt == "global-delivery-status"
}

// msgIDs reads <id> tokens. Only printable ASCII ids are kept: every
// Message-ID we send is, so any other (a legacy client's 8-bit byte, a
// NUL) can name nothing of ours and never reaches SQL.
func msgIDs(s string) []string {
	var ids []string
	for _, m := range msgIDPattern.FindAllStringSubmatch(s, -1) {
		if len(ids) == messageIDsMax {
			break
		}
		if id := m[1]; len(id) <= addressMax && isPrintableASCII(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return s != ""
}

// report collects the parts of a multipart/report: the per-recipient
// delivery status fields and the returned original's headers.
type report struct {
	recipients []recipientStatus
	original   []string
}

type recipientStatus struct {
	final, original, action, status string
}

// address is the one the block names: its Final-Recipient, else its
// Original-Recipient.
func (r recipientStatus) address() string {
	if r.final != "" {
		return r.final
	}
	return r.original
}

// read walks the report's own parts only (RFC 3462: the human-readable
// part, the delivery-status part, the returned message or its headers).
func (r *report) read(contentType string, body io.Reader) {
	_, params, _ := mime.ParseMediaType(contentType)
	mr := multipart.NewReader(body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err != nil {
			return // the end, or a truncated message: keep what was read
		}
		mediaType, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch mediaType {
		case "message/delivery-status", "message/global-delivery-status":
			r.readStatus(decodedPart(p.Header, p))
		case "message/rfc822", "text/rfc822-headers", "message/global", "message/global-headers":
			data, _ := io.ReadAll(io.LimitReader(decodedPart(p.Header, p), 1<<20))
			if orig, err := mail.ReadMessage(bytes.NewReader(append(data, "\r\n\r\n"...))); err == nil {
				r.original = append(r.original, msgIDs(orig.Header.Get("Message-Id"))...)
			}
		}
	}
}

// readStatus parses the delivery-status fields: one per-message block,
// then one block per recipient, separated by blank lines.
func (r *report) readStatus(body io.Reader) {
	tp := textproto.NewReader(bufio.NewReader(body))
	for first := true; len(r.recipients) < recipientsMax; first = false {
		h, err := tp.ReadMIMEHeader()
		if first {
			// Gmail names the original here as well.
			r.original = append(r.original, msgIDs(h.Get("X-Original-Message-Id")+" "+h.Get("Original-Message-Id"))...)
		}
		if !first && len(h) > 0 {
			r.recipients = append(r.recipients, recipientStatus{
				final:    recipientAddress(h.Get("Final-Recipient")),
				original: recipientAddress(h.Get("Original-Recipient")),
				action:   strings.ToLower(strings.TrimSpace(h.Get("Action"))),
				status:   cleanText(firstWord(h.Get("Status"))), // "5.1.1 (bad destination mailbox)"
			})
		}
		if err != nil {
			return
		}
	}
}

// recipientAddress reads "rfc822; a@b" (or "utf-8; ..."): the address,
// lower case and clean, or "" when it is not one.
func recipientAddress(field string) string {
	if _, a, ok := strings.Cut(field, ";"); ok {
		field = a
	}
	a := strings.ToLower(cleanText(strings.Trim(strings.TrimSpace(headerText(field)), "<>")))
	if len(a) > addressMax || strings.ContainsAny(a, " \t<>") || !strings.Contains(a, "@") {
		return ""
	}
	return a
}

func (r *report) finding() Finding {
	// The report's own parts first: a long References cannot push them out.
	f := Finding{Kind: KindOther, MessageIDs: r.original[:min(len(r.original), reportIDsMax)]}
	seen := map[string]bool{}
	for _, rc := range r.recipients {
		switch rc.action {
		case "failed":
			if f.Kind != KindBounce {
				f.Kind, f.Status = KindBounce, rc.status
			}
			if a := rc.address(); a != "" && !seen[a] {
				seen[a] = true
				f.Recipients = append(f.Recipients, a)
			}
			hard := strings.HasPrefix(rc.status, "5")
			f.Failed = append(f.Failed, FailedRecipient{Final: rc.final, Original: rc.original, Hard: hard})
			f.Hard = f.Hard || hard
		case "delayed":
			if f.Kind == KindOther {
				f.Kind = KindDelayed
			}
		}
	}
	return f
}

// appendAddresses adds the addresses in a header value, lower case.
func appendAddresses(dst []string, v string) []string {
	if list, err := mail.ParseAddressList(v); err == nil {
		for _, a := range list {
			if a := strings.ToLower(a.Address); len(a) <= addressMax {
				dst = append(dst, a)
			}
		}
		return dst
	}
	for _, w := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(" \t,<>\"", r) }) {
		if strings.Contains(w, "@") && len(w) <= addressMax {
			dst = append(dst, strings.ToLower(w))
		}
	}
	return dst
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}
