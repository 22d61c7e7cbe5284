// Package inbox reads each mailbox's INBOX over IMAP and ends the sequences
// its messages answer: replies (In-Reply-To/References naming a Message-ID
// we sent) end as 'replied', delivery status notifications (RFC 3464) that
// report a failed delivery end as 'bounced', and a permanent failure also
// suppresses the address.
package inbox

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
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

// Finding is what Classify learnt from one message.
type Finding struct {
	Kind Kind
	// MessageIDs are the Message-IDs (without angle brackets) the message
	// refers to: In-Reply-To and References of a reply, the original
	// message's Message-ID of a bounce.
	MessageIDs []string
	// Recipients are the addresses a bounce reports as failed, lower case.
	Recipients []string
	// Hard is true when a failure is permanent (status 5.x.x).
	Hard bool
	// Status is the first failed recipient's enhanced status code.
	Status string
	// UnsubscribeToken is the token of a KindUnsubscribeMail.
	UnsubscribeToken string
}

// maxPartDepth bounds the MIME walk: reports nest two or three levels deep.
const maxPartDepth = 6

var msgIDPattern = regexp.MustCompile(`<([^<>\s]+)>`)

// Classify reads a raw RFC 5322 message (possibly truncated) and says
// whether it is a reply, a bounce or neither.
func Classify(raw []byte) Finding {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Finding{Kind: KindOther}
	}
	var rep report
	rep.walk(textproto.MIMEHeader(msg.Header), msg.Body, 0)
	if rep.isDSN {
		return rep.finding()
	}
	if token, ok := unsubscribe.ParseMailtoRequest(msg.Header); ok {
		return Finding{Kind: KindUnsubscribeMail, UnsubscribeToken: token}
	}
	ids := msgIDs(msg.Header.Get("In-Reply-To") + " " + msg.Header.Get("References"))
	switch {
	case len(ids) == 0:
		return Finding{Kind: KindOther}
	case isAutoReply(msg.Header):
		return Finding{Kind: KindAutoReply, MessageIDs: ids}
	}
	return Finding{Kind: KindReply, MessageIDs: ids}
}

// isAutoReply recognises machine answers (RFC 3834 Auto-Submitted, and the
// headers Exchange and common vacation responders add), which must not end
// a sequence as a reply would.
func isAutoReply(h mail.Header) bool {
	if v := strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted"))); v != "" && v != "no" {
		return true
	}
	return h.Get("X-Autoreply") != "" || h.Get("X-Autorespond") != ""
}

func msgIDs(s string) []string {
	var ids []string
	for _, m := range msgIDPattern.FindAllStringSubmatch(s, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// report collects the parts of a multipart/report: the per-recipient
// delivery status fields and the returned original's headers.
type report struct {
	isDSN      bool
	recipients []recipientStatus
	original   []string
}

type recipientStatus struct {
	address, action, status string
}

func (r *report) walk(h textproto.MIMEHeader, body io.Reader, depth int) {
	if depth > maxPartDepth {
		return
	}
	mediaType, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return
	}
	if strings.EqualFold(h.Get("Content-Transfer-Encoding"), "base64") {
		body = base64.NewDecoder(base64.StdEncoding, newlineStripper{body})
	}
	switch {
	case strings.HasPrefix(mediaType, "multipart/"):
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return // the end, or a truncated message: keep what was read
			}
			r.walk(p.Header, qpDecoded(p), depth+1)
		}
	case mediaType == "message/delivery-status" || mediaType == "message/global-delivery-status":
		r.isDSN = true
		r.readStatus(body)
	case mediaType == "message/rfc822" || mediaType == "text/rfc822-headers" ||
		mediaType == "message/global" || mediaType == "message/global-headers":
		data, _ := io.ReadAll(io.LimitReader(body, 1<<20))
		if orig, err := mail.ReadMessage(bytes.NewReader(append(data, "\r\n\r\n"...))); err == nil {
			r.original = append(r.original, msgIDs(orig.Header.Get("Message-Id"))...)
		}
	}
}

// readStatus parses the delivery-status fields: one per-message block,
// then one block per recipient, separated by blank lines.
func (r *report) readStatus(body io.Reader) {
	tp := textproto.NewReader(bufio.NewReader(body))
	for first := true; ; first = false {
		h, err := tp.ReadMIMEHeader()
		if first {
			// Gmail names the original here as well.
			r.original = append(r.original, msgIDs(h.Get("X-Original-Message-Id"))...)
		}
		if !first && len(h) > 0 {
			addr := h.Get("Final-Recipient")
			if addr == "" {
				addr = h.Get("Original-Recipient")
			}
			if _, a, ok := strings.Cut(addr, ";"); ok {
				addr = a
			}
			r.recipients = append(r.recipients, recipientStatus{
				address: strings.ToLower(strings.Trim(strings.TrimSpace(addr), "<>")),
				action:  strings.ToLower(strings.TrimSpace(h.Get("Action"))),
				status:  firstWord(h.Get("Status")), // "5.1.1 (bad destination mailbox)"
			})
		}
		if err != nil {
			return
		}
	}
}

func (r *report) finding() Finding {
	f := Finding{Kind: KindOther, MessageIDs: r.original}
	for _, rc := range r.recipients {
		switch rc.action {
		case "failed":
			if f.Kind != KindBounce {
				f.Kind, f.Status = KindBounce, rc.status
			}
			if rc.address != "" {
				f.Recipients = append(f.Recipients, rc.address)
			}
			f.Hard = f.Hard || strings.HasPrefix(rc.status, "5")
		case "delayed":
			if f.Kind == KindOther {
				f.Kind = KindDelayed
			}
		}
	}
	return f
}

// qpDecoded undoes quoted-printable, which NextRawPart leaves alone so the
// header keeps telling base64 parts apart.
func qpDecoded(p *multipart.Part) io.Reader {
	if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		p.Header.Del("Content-Transfer-Encoding")
		return quotedprintable.NewReader(p)
	}
	return p
}

// newlineStripper drops line breaks so base64 bodies decode.
type newlineStripper struct{ r io.Reader }

func (n newlineStripper) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, b := range p[:k] {
			if b != '\r' && b != '\n' {
				p[j] = b
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}
