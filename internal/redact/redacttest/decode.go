package redacttest

import (
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decodings are text read in enc by the standard library's decoders, each
// escape where it stands and everything else as it is; two readings where
// the encoding is ambiguous (+ or _ for a space, or themselves), and for
// base64 every run's bytes at every alignment.
func Decodings(enc Encoding, text string) []string {
	switch enc {
	case Percent:
		// "+" is a space in a query or a form: read both ways.
		return []string{percentDecode(text), percentDecode(strings.ReplaceAll(text, "+", "%20"))}
	case JSON:
		return []string{jsonEscapes.ReplaceAllStringFunc(text, func(run string) string {
			var s string
			if json.Unmarshal([]byte(`"`+run+`"`), &s) != nil {
				return run
			}
			return s
		})}
	case HTML:
		return []string{htmlReferences.ReplaceAllStringFunc(text, func(ref string) string {
			// A named reference counts when the whole of it names a
			// character (or two): "&ampx;" is not one.
			if s := html.UnescapeString(ref); s != ref && (ref[1] == '#' || utf8.RuneCountInString(s) <= 2) {
				return s
			}
			return ref
		})}
	case QuotedPrintable:
		// "_" is a space in a header's encoded word: read both ways.
		return []string{qpDecode(text), qpDecode(strings.ReplaceAll(text, "_", "=20"))}
	case Base64, Base64URL:
		return base64Decodings(text)
	}
	return []string{text}
}

var (
	percentEscapes = regexp.MustCompile(`(?:%[0-9A-Fa-f]{2})+`)
	jsonEscapes    = regexp.MustCompile(`(?:\\u[0-9A-Fa-f]{4}|\\["\\/bfnrt])+`)
	htmlReferences = regexp.MustCompile(`&#[xX][0-9A-Fa-f]+;?|&#[0-9]+;?|&[A-Za-z][A-Za-z0-9]*;`)
	qpEscapes      = regexp.MustCompile(`=[0-9A-Fa-f]{2}|=[ \t]*\r?\n`)
	base64Runs     = regexp.MustCompile(`[A-Za-z0-9+/_-]+`)
)

func percentDecode(text string) string {
	return percentEscapes.ReplaceAllStringFunc(text, func(run string) string {
		s, _ := url.PathUnescape(run) // every %XX of run is valid
		return s
	})
}

func qpDecode(text string) string {
	return qpEscapes.ReplaceAllStringFunc(text, func(esc string) string {
		if len(esc) != 3 || esc[1] == ' ' || esc[1] == '\t' || esc[1] == '\r' {
			return "" // a soft line break
		}
		b, _ := strconv.ParseUint(esc[1:], 16, 8)
		return string([]byte{byte(b)})
	})
}

// base64Decodings decodes each run of base64 characters (padding ends a
// run) at each of its four alignments, in either alphabet.
func base64Decodings(text string) []string {
	var out []string
	toStd := strings.NewReplacer("-", "+", "_", "/")
	for _, run := range base64Runs.FindAllString(text, -1) {
		run = toStd.Replace(run)
		for off := 0; off < 4 && off < len(run); off++ {
			piece := run[off:]
			piece = piece[:len(piece)-len(piece)%4]
			if b, err := base64.StdEncoding.DecodeString(piece); err == nil {
				out = append(out, string(b))
			}
			// The tail: a blob without padding ends mid-group.
			if rest := run[off:]; len(rest)%4 > 1 {
				if b, err := base64.RawStdEncoding.DecodeString(rest); err == nil {
					out = append(out, string(b))
				}
			}
		}
	}
	return out
}

// Leaks reports the first encoding in which text still spells secret
// (raw included), read with Decodings; "" when none does.
func Leaks(text, secret string) Encoding {
	for _, enc := range Encodings {
		for _, d := range Decodings(enc, text) {
			if strings.Contains(d, secret) {
				return enc
			}
		}
	}
	return ""
}
