package inbox

import (
	"html"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"regexp"
	"strings"
)

// What a reply says first: the unsubscribe check reads the first lines a
// person wrote above the quoted message.

const (
	// bodyBytesMax bounds the text read from a reply.
	bodyBytesMax = 64 << 10
	// bodyDepthMax bounds the MIME nesting walked to find the text.
	bodyDepthMax = 4
	// firstLinesMax is how many of the reply's own lines are read.
	firstLinesMax = 3
	lineMax       = 300
)

var (
	// quoteStart matches the line a mail client puts above the quoted
	// message (Gmail, Apple Mail, Thunderbird, Outlook, Naver, Daum, ...).
	quoteStart = regexp.MustCompile(`(?i)^(>|-{3,}\s*original message|_{8,}|from:\s|보낸 사람:|-{3,}\s*원본 메시지)|(wrote|a écrit|schrieb|작성)\s*:$`)
	htmlBreak  = regexp.MustCompile(`(?i)<\s*(br|/p|/div|/li|/tr|/h\d)[^>]*>`)
	htmlTag    = regexp.MustCompile(`<[^>]*>`)
	replyLead  = regexp.MustCompile(`(?i)^\s*((re|fwd?|aw|sv|vs|답장|회신|전달)\s*(\[\d+\])?\s*:\s*)+`)
)

// firstLines returns the first non-empty lines of a message's text (the
// text/plain part, else the HTML one without tags) above any quote.
func firstLines(h textproto.MIMEHeader, body io.Reader) []string {
	text, _ := bodyText(h, body, 0)
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(clip(cleanText(line), lineMax))
		switch {
		case line == "":
			continue
		case quoteStart.MatchString(line):
			return lines
		}
		if lines = append(lines, line); len(lines) == firstLinesMax {
			break
		}
	}
	return lines
}

// bodyText reads a part's text; plain is false for text made from HTML.
func bodyText(h textproto.MIMEHeader, body io.Reader, depth int) (text string, plain bool) {
	mediaType, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		mediaType = "text/plain" // RFC 2045's default
	}
	r := decodedPart(h, body)
	switch {
	case strings.HasPrefix(mediaType, "multipart/") && depth < bodyDepthMax:
		mr := multipart.NewReader(r, params["boundary"])
		fallback := ""
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return fallback, false
			}
			t, plain := bodyText(p.Header, p, depth+1)
			if plain && strings.TrimSpace(t) != "" {
				return t, true
			}
			if fallback == "" {
				fallback = t
			}
		}
	case mediaType == "text/plain":
		return readText(r, params["charset"]), true
	case mediaType == "text/html":
		t := htmlBreak.ReplaceAllString(readText(r, params["charset"]), "\n")
		return html.UnescapeString(htmlTag.ReplaceAllString(t, "")), false
	}
	return "", false
}

// readText reads at most bodyBytesMax bytes in charset as UTF-8.
func readText(r io.Reader, charset string) string {
	r = io.LimitReader(r, bodyBytesMax)
	if cs := strings.ToLower(charset); cs != "" && cs != "utf-8" && cs != "us-ascii" {
		if d, err := charsetReader(cs, r); err == nil {
			r = d
		}
	}
	data, _ := io.ReadAll(r)
	return validUTF8(strings.ReplaceAll(string(data), "\r\n", "\n"))
}

// replySubject is a subject without its Re:/Fwd: prefixes.
func replySubject(s string) string {
	return strings.TrimSpace(replyLead.ReplaceAllString(s, ""))
}
