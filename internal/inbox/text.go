package inbox

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/textproto"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"
)

// Header values and body text as they arrive are bytes in any charset, or
// none; everything the tick keeps goes through here first, so what
// reaches SQL or an event is valid UTF-8 without NULs or control
// characters.

var wordDecoder = &mime.WordDecoder{CharsetReader: charsetReader}

// headerText decodes a header value's RFC 2047 encoded words and cleans
// the result; raw 8-bit bytes that are not UTF-8 are read as Latin-1, what
// legacy clients send.
func headerText(v string) string {
	if d, err := wordDecoder.DecodeHeader(v); err == nil {
		v = d
	}
	return cleanText(v)
}

// cleanText makes s valid UTF-8 (invalid bytes read as Latin-1) and turns
// control characters, NUL included, into spaces.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return ' '
		}
		return r
	}, validUTF8(s))
}

// validUTF8 keeps valid UTF-8 sequences and reads every other byte as
// Latin-1.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			r = rune(s[i])
		}
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// charsetReader decodes the charsets mail uses (the WHATWG labels:
// windows-1252, euc-kr and ks_c_5601-1987, iso-2022-jp, ...).
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return nil, fmt.Errorf("charset %q: %w", charset, err)
	}
	return enc.NewDecoder().Reader(input), nil
}

// decodedPart undoes a part's Content-Transfer-Encoding.
func decodedPart(h textproto.MIMEHeader, body io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, newlineStripper{body})
	case "quoted-printable":
		return quotedprintable.NewReader(body)
	}
	return body
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
