package sequence

import (
	"bufio"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/rindactl/rindactl/internal/redact"
)

// Bounds on what one SMTP reply may be. A server can answer with an
// endless reply (a 100 MB multi-line 550, endless "250-" EHLO lines): it is
// cut at these bounds and the connection dropped, so a tick's memory and
// time do not depend on what a server sends.
const (
	// ReplyMaxBytes bounds one reply, all its lines together.
	ReplyMaxBytes = 64 << 10
	// ReplyMaxLines bounds the lines of one reply (an EHLO lists ~15).
	ReplyMaxLines = 200
	// wireReadMax bounds what the connection reads between two writes:
	// it holds where the reply reader cannot look (the greeting, EHLO,
	// STARTTLS and AUTH inside the dial, and under TLS, where the TLS
	// records and the handshake's certificates count too).
	wireReadMax = 4 * ReplyMaxBytes
)

// ReplyTooLongError is a reply cut at ReplyMaxBytes or ReplyMaxLines: its
// code and the start of its text, which is what classification reads. The
// rest of the reply is never read; the connection is dropped.
type ReplyTooLongError struct {
	Code int
	// Text is the reply's first lines, at most redact.StoredMax bytes,
	// joined by newlines as textproto joins them.
	Text string
}

func (e *ReplyTooLongError) Error() string {
	return fmt.Sprintf("%d %s (reply cut: longer than %d bytes or %d lines)", e.Code, e.Text, ReplyMaxBytes, ReplyMaxLines)
}

// boundReplies makes every later reply on sc's connection go through a
// replyReader. It must run again after STARTTLS, which replaces sc.Text.
func boundReplies(text *textproto.Conn) {
	text.Reader.R = bufio.NewReader(&replyReader{r: text.Reader.R})
}

// replyReader follows the SMTP reply structure in the bytes textproto
// reads (RFC 5321 4.2: "CODE-text" lines, then "CODE text") and fails the
// read that would pass a bound, with what the reply said so far.
type replyReader struct {
	r   io.Reader
	err error

	// The reply being read: its size so far, its first line's code and
	// whether that line continues ("CODE-"), its text (capped).
	bytes, lines int
	code         string
	multi        bool
	text         []byte
	// The line being read, without its CRLF, capped.
	line []byte
}

func (rr *replyReader) Read(p []byte) (int, error) {
	if rr.err != nil {
		return 0, rr.err
	}
	n, err := rr.r.Read(p)
	for i := 0; i < n; i++ {
		if rr.feed(p[i]) {
			rr.err = rr.tooLong()
			return i, rr.err
		}
	}
	return n, err
}

// feed takes one byte and reports whether the reply passed a bound.
func (rr *replyReader) feed(b byte) bool {
	if rr.bytes++; rr.bytes > ReplyMaxBytes {
		return true
	}
	switch {
	case b == '\n':
		return rr.endLine()
	case b != '\r' && len(rr.line) < redact.StoredMax+4:
		rr.line = append(rr.line, b)
	}
	return false
}

// endLine ends the line read so far, as textproto's ReadResponse takes it.
func (rr *replyReader) endLine() bool {
	line := rr.line
	rr.line = rr.line[:0]
	rr.lines++
	first := rr.lines == 1
	var ends bool
	if first {
		if len(line) >= 3 {
			rr.code = string(line[:3])
		}
		rr.multi = len(line) >= 4 && line[3] == '-'
		ends = !rr.multi
		rr.addText(textOf(line))
	} else {
		// textproto reads on until a line with the first line's code and
		// a space; any other line is more text.
		ends = len(line) >= 4 && line[3] == ' ' && string(line[:3]) == rr.code
		rr.addText("\n")
		if len(line) >= 4 && (line[3] == ' ' || line[3] == '-') && string(line[:3]) == rr.code {
			rr.addText(textOf(line))
		} else {
			rr.addText(string(line))
		}
	}
	if ends {
		rr.bytes, rr.lines, rr.code, rr.multi, rr.text = 0, 0, "", false, rr.text[:0]
		return false
	}
	return rr.lines >= ReplyMaxLines
}

// textOf is a reply line's text, after "CODE-" or "CODE ".
func textOf(line []byte) string {
	if len(line) <= 4 {
		return ""
	}
	return string(line[4:])
}

func (rr *replyReader) addText(s string) {
	if room := redact.StoredMax - len(rr.text); room > 0 {
		rr.text = append(rr.text, s[:min(len(s), room)]...)
	}
}

func (rr *replyReader) tooLong() error {
	if rr.lines == 0 && len(rr.line) >= 3 {
		// Cut inside the first line.
		rr.code = string(rr.line[:3])
		rr.addText(textOf(rr.line))
	}
	code, _ := strconv.Atoi(rr.code)
	return &ReplyTooLongError{Code: code, Text: strings.ToValidUTF8(string(rr.text), "")}
}
