package imaptest

import (
	"embed"
	"strings"
)

// samples are real reply and bounce messages from Gmail, Microsoft 365 and
// Postfix, with placeholders where the addresses and Message-IDs go.
//
//go:embed testdata/*.eml
var samples embed.FS

// Fill is what a sample's placeholders become.
type Fill struct {
	// MessageID is the message answered (no angle brackets); Thread an
	// earlier one of the same thread (References).
	MessageID, Thread string
	// Mailbox is our sending mailbox, Recipient the lead.
	Mailbox, Recipient string
}

// Sample returns testdata/name filled in, with CRLF line ends as an IMAP
// server serves it; it panics on an unknown name (a programming error).
func Sample(name string, f Fill) []byte {
	data, err := samples.ReadFile("testdata/" + name)
	if err != nil {
		panic("imaptest: no sample " + name)
	}
	s := strings.NewReplacer("{{MESSAGE_ID}}", f.MessageID, "{{THREAD}}", f.Thread,
		"{{MAILBOX}}", f.Mailbox, "{{RECIPIENT}}", f.Recipient).Replace(string(data))
	return []byte(strings.ReplaceAll(s, "\n", "\r\n"))
}
