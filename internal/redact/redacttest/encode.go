// Package redacttest spells a secret in every encoding a server or a
// library may echo it in, and finds a secret in text by decoding it with
// the standard library: what the redactor's tests, its fuzz target and
// the hostile test servers (smtptest, providertest) share.
package redacttest

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Encoding names one way a secret comes back.
type Encoding string

// The encodings redact hides.
const (
	Raw             Encoding = "raw"
	Percent         Encoding = "percent"          // %XX, either hex case, space as + or %20
	JSON            Encoding = "json"             // \" \\ \/ \n … and \uXXXX (surrogate pairs)
	HTML            Encoding = "html"             // &amp; &eacute; &#xE9; &#233;
	QuotedPrintable Encoding = "quoted-printable" // =XX, soft line breaks, _ for space
	Base64          Encoding = "base64"           // standard alphabet, padded or not, at any offset
	Base64URL       Encoding = "base64url"        // URL alphabet, padded or not, at any offset
)

// Encodings lists every encoding.
var Encodings = []Encoding{Raw, Percent, JSON, HTML, QuotedPrintable, Base64, Base64URL}

// Encode spells secret in enc. r chooses what a real encoder may choose:
// hex case per digit, which optional bytes are escaped (a partial
// encoding), + or %20 for a space, named or numeric entities, soft line
// breaks, and the bytes around the secret inside a base64 blob (its
// offset alignment) and the padding. With r nil every byte that can be
// escaped is, upper-case, padded, at offset 0.
func Encode(enc Encoding, secret string, r *rand.Rand) string {
	switch enc {
	case Percent:
		return percent(secret, r)
	case JSON:
		return jsonEscape(secret, r)
	case HTML:
		return htmlEscape(secret, r)
	case QuotedPrintable:
		return quotedPrintable(secret, r)
	case Base64, Base64URL:
		return base64Blob(enc, secret, r)
	}
	return secret
}

// coin is r's choice, true without r.
func coin(r *rand.Rand) bool { return r == nil || r.IntN(2) == 0 }

// hexByte writes b as two hex digits, each of r's case.
func hexByte(b byte, r *rand.Rand) string {
	const upper, lower = "0123456789ABCDEF", "0123456789abcdef"
	digit := func(n byte) byte {
		if r != nil && r.IntN(2) == 0 {
			return lower[n]
		}
		return upper[n]
	}
	return string([]byte{digit(b >> 4), digit(b & 15)})
}

func percent(s string, r *rand.Rand) string {
	plusIsSpace := r != nil && r.IntN(2) == 0
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' && plusIsSpace:
			sb.WriteByte('+')
		case c == '%' || c == '+' && plusIsSpace || coin(r):
			sb.WriteString("%" + hexByte(c, r))
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

func jsonEscape(s string, r *rand.Rand) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRuneInString(s[i:])
		raw := s[i : i+n]
		i += n
		switch {
		case c == utf8.RuneError && n == 1:
			sb.WriteString(raw) // not UTF-8: JSON cannot spell it
		case c == '"' || c == '\\':
			sb.WriteString(`\` + raw)
		case c == '/' && r != nil && r.IntN(3) == 0:
			sb.WriteString(`\/`)
		case c < 0x20 || coin(r):
			if c > 0xFFFF {
				hi, lo := surrogates(c)
				sb.WriteString(`\u` + hex4(hi, r) + `\u` + hex4(lo, r))
			} else {
				sb.WriteString(`\u` + hex4(c, r))
			}
		default:
			sb.WriteString(raw)
		}
	}
	return sb.String()
}

func surrogates(c rune) (rune, rune) {
	c -= 0x10000
	return 0xD800 + c>>10, 0xDC00 + c&0x3FF
}

func hex4(c rune, r *rand.Rand) string { return hexByte(byte(c>>8), r) + hexByte(byte(c), r) }

// named are HTML5 named references for characters secrets hold.
var named = map[rune]string{'&': "amp", '<': "lt", '>': "gt", '"': "quot", '\'': "apos", '/': "sol", '+': "plus",
	'=': "equals", '!': "excl", '#': "num", '$': "dollar", '%': "percnt", '(': "lpar", ')': "rpar", '*': "ast",
	',': "comma", '.': "period", ':': "colon", ';': "semi", '?': "quest", '@': "commat", '_': "lowbar",
	'é': "eacute", 'É': "Eacute", 'ö': "ouml", 'ä': "auml", 'ü': "uuml", 'ß': "szlig"}

func htmlEscape(s string, r *rand.Rand) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRuneInString(s[i:])
		raw := s[i : i+n]
		i += n
		// Numeric references to NUL and to 0x80-0x9F decode to other
		// characters (HTML5): such bytes stay as they are.
		numeric := c != 0 && (c < 0x80 || c > 0x9F) && !(c == utf8.RuneError && n == 1)
		switch {
		case c == '&' && (r == nil || r.IntN(2) == 0):
			sb.WriteString("&amp;")
		case c == '&':
			sb.WriteString("&#" + fmt.Sprint(c) + ";")
		case !numeric || !coin(r):
			sb.WriteString(raw)
		default:
			sb.WriteString(htmlReference(c, r))
		}
	}
	return sb.String()
}

// htmlReference is a reference to c of r's choice: named where there is
// a name, decimal, or hex with x or X and digits of either case.
func htmlReference(c rune, r *rand.Rand) string {
	if r == nil {
		return "&#x" + fmt.Sprintf("%X", c) + ";"
	}
	switch r.IntN(3) {
	case 0:
		if name, ok := named[c]; ok {
			return "&" + name + ";"
		}
		return "&#" + fmt.Sprint(c) + ";"
	case 1:
		return "&#" + fmt.Sprint(c) + ";"
	}
	x := "x"
	if r.IntN(2) == 0 {
		x = "X"
	}
	return "&#" + x + strings.TrimLeft(hexByte(byte(c>>24), r)+hexByte(byte(c>>16), r)+hexByte(byte(c>>8), r)+hexByte(byte(c), r), "0") + ";"
}

func quotedPrintable(s string, r *rand.Rand) string {
	underscoreIsSpace := r != nil && r.IntN(2) == 0
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 && r != nil && r.IntN(4) == 0 {
			sb.WriteString([]string{"=\r\n", "=\n", "= \r\n"}[r.IntN(3)]) // a soft line break
		}
		c := s[i]
		switch {
		case c == ' ' && underscoreIsSpace:
			sb.WriteByte('_')
		case c == '=' || c == '_' && underscoreIsSpace || c < 33 || c > 126 || coin(r):
			sb.WriteString("=" + hexByte(c, r))
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// base64Blob encodes secret inside a blob, after 0-5 other bytes (each
// offset modulo 3 is an alignment) and before 0-5 more, as AUTH PLAIN
// puts the password after the user names.
func base64Blob(enc Encoding, secret string, r *rand.Rand) string {
	e := base64.StdEncoding
	if enc == Base64URL {
		e = base64.URLEncoding
	}
	before, after := "", ""
	if r != nil {
		before, after = randomBytes(r, r.IntN(6)), randomBytes(r, r.IntN(6))
		if r.IntN(2) == 0 {
			e = e.WithPadding(base64.NoPadding)
		}
	}
	return e.EncodeToString([]byte(before + secret + after))
}

func randomBytes(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

// Spellings are a secret's fixed spellings, by name, that the hostile
// test servers echo: each encoding in full and in the variants encoders
// differ in (hex case, %20 or +, named or numeric entities, padding).
func Spellings(user, secret string) map[string]string {
	lowerHex := strings.NewReplacer("A", "a", "B", "b", "C", "c", "D", "d", "E", "e", "F", "f")
	everyByte := Encode(Percent, secret, nil)
	return map[string]string{
		"raw":                       secret,
		"percent, every byte":       everyByte,
		"percent, lower hex":        lowerHex.Replace(everyByte),
		"percent, query":            url.QueryEscape(secret),
		"percent, path":             url.PathEscape(secret),
		"percent, + for space":      strings.ReplaceAll(everyByte, "%20", "+"),
		"json, every \\u":           Encode(JSON, secret, nil),
		"json, lower hex":           lowerHex.Replace(Encode(JSON, secret, nil)),
		"html, numeric hex":         Encode(HTML, secret, nil),
		"html, decimal":             htmlDecimal(secret),
		"html, named":               htmlNamed(secret),
		"quoted-printable":          Encode(QuotedPrintable, secret, nil),
		"quoted-printable, soft":    softBreaks(Encode(QuotedPrintable, secret, nil)),
		"base64, auth plain":        base64.StdEncoding.EncodeToString([]byte("\x00" + user + "\x00" + secret)),
		"base64, auth login":        base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64, unpadded offset 1": base64.RawStdEncoding.EncodeToString([]byte("x" + secret)),
		"base64url, offset 2":       base64.URLEncoding.EncodeToString([]byte("xy" + secret)),
		"base64url, unpadded":       base64.RawURLEncoding.EncodeToString([]byte(secret)),
	}
}

func htmlDecimal(s string) string {
	var sb strings.Builder
	for _, c := range s {
		fmt.Fprintf(&sb, "&#%d;", c)
	}
	return sb.String()
}

// htmlNamed uses a named reference where there is one, &amp; for & and
// the character itself otherwise.
func htmlNamed(s string) string {
	var sb strings.Builder
	for _, c := range s {
		if name, ok := named[c]; ok {
			sb.WriteString("&" + name + ";")
		} else {
			sb.WriteRune(c)
		}
	}
	return sb.String()
}

// softBreaks puts a soft line break after every escape.
func softBreaks(qp string) string {
	return strings.ReplaceAll(qp, "=", "=\r\n=")[3:]
}
