package redact

import (
	"html"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decoders read text in each escaping encoding; nil: text holds no
// escape of it. Each is lenient as servers' echoes are: an escape is
// decoded where it stands, anything else is kept as it is, so a partial
// encoding (some bytes escaped, some not) reads as the secret.
var decoders = []func(string) *view{decodePercent, decodeJSON, decodeHTML, decodeQuotedPrintable}

// decodePercent: %XX in either hex case; '+' and ' ' fold together (a
// space is "+" in a query or form, "%20" in a path; a '+' is "%2B").
func decodePercent(s string) *view {
	if !hasPercentEscape(s) {
		if strings.IndexByte(s, '+') < 0 {
			return nil
		}
		return &view{text: s, fold: plusIsSpace} // the text itself, '+' read as ' '
	}
	w := newViewBuilder(len(s))
	for i := 0; i < len(s); {
		if b, ok := hexPair(s, i+1); ok && s[i] == '%' {
			w.add(string([]byte{b}), i, i+3)
			i += 3
			continue
		}
		w.add(s[i:i+1], i, i+1)
		i++
	}
	return w.view(plusIsSpace)
}

func plusIsSpace(c byte) byte {
	if c == '+' {
		return ' '
	}
	return c
}

func hasPercentEscape(s string) bool {
	return anyAt(s, '%', func(i int) bool { _, ok := hexPair(s, i+1); return ok })
}

// anyAt reports whether escape holds at some index of c in s: a text
// without any escape of an encoding builds no view of it (the hot path of
// every log line).
func anyAt(s string, c byte, escape func(i int) bool) bool {
	for i := strings.IndexByte(s, c); i >= 0; {
		if escape(i) {
			return true
		}
		j := strings.IndexByte(s[i+1:], c)
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// hexPair reads the byte two hex digits (either case) at s[i:] spell.
func hexPair(s string, i int) (byte, bool) {
	if i+1 >= len(s) {
		return 0, false
	}
	hi, ok1 := unhex(s[i])
	lo, ok2 := unhex(s[i+1])
	return hi<<4 | lo, ok1 && ok2
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// jsonSimple are the one-letter JSON escapes.
var jsonSimple = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// decodeJSON: the one-letter escapes and \uXXXX (either hex case), a
// surrogate pair as one character and a lone surrogate as U+FFFD, as
// encoding/json reads them.
func decodeJSON(s string) *view {
	if !anyAt(s, '\\', func(i int) bool {
		_, simple := jsonSimple[byteAt(s, i+1)]
		_, n := jsonUnicode(s, i)
		return simple || n > 0
	}) {
		return nil
	}
	w := newViewBuilder(len(s))
	escapes := 0
	for i := 0; i < len(s); {
		if s[i] == '\\' && i+1 < len(s) {
			if c, ok := jsonSimple[s[i+1]]; ok {
				w.add(string([]byte{c}), i, i+2)
				i += 2
				escapes++
				continue
			}
			if r, n := jsonUnicode(s, i); n > 0 {
				w.add(string(r), i, i+n)
				i += n
				escapes++
				continue
			}
		}
		w.add(s[i:i+1], i, i+1)
		i++
	}
	if escapes == 0 {
		return nil
	}
	return w.view(nil)
}

// jsonUnicode reads \uXXXX at s[i:], and its low surrogate after it when
// it is a high one: the character and the bytes read, 0 when none.
func jsonUnicode(s string, i int) (rune, int) {
	r, ok := u4(s, i)
	if !ok {
		return 0, 0
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if lo, ok := u4(s, i+6); ok {
		if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
			return pair, 12
		}
	}
	return utf8.RuneError, 6
}

func u4(s string, i int) (rune, bool) {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	hi, ok1 := hexPair(s, i+2)
	lo, ok2 := hexPair(s, i+4)
	return rune(hi)<<8 | rune(lo), ok1 && ok2
}

// decodeHTML: numeric references (&#233; &#xE9; &#XE9;, the ';' optional
// as browsers read them) and named ones with their ';' (&eacute; &sol;),
// each read by the html package so that its rules (&#x80; is '€', &#0;
// is U+FFFD) hold here too.
func decodeHTML(s string) *view {
	if !anyAt(s, '&', func(i int) bool { return htmlReference(s[i:]) > 0 }) {
		return nil
	}
	w := newViewBuilder(len(s))
	refs := 0
	for i := 0; i < len(s); {
		if n := htmlReference(s[i:]); n > 0 {
			if d := html.UnescapeString(s[i : i+n]); d != s[i:i+n] && (s[i+1] == '#' || utf8.RuneCountInString(d) <= 2) {
				// A named reference counts when the whole of it names a
				// character (or two): "&ampx;" is "&" and "x;".
				w.add(d, i, i+n)
				i += n
				refs++
				continue
			}
		}
		w.add(s[i:i+1], i, i+1)
		i++
	}
	if refs == 0 {
		return nil
	}
	return w.view(nil)
}

// htmlReference is the length of the reference s starts with
// (&#[xX]hex+;? &#dec+;? &name;), 0 when none.
func htmlReference(s string) int {
	if len(s) < 3 || s[0] != '&' {
		return 0
	}
	if s[1] == '#' {
		return numericReference(s)
	}
	j := 1
	for j < len(s) && (isDigit(s[j]) || s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z') {
		j++
	}
	if j == 1 || isDigit(s[1]) || j >= len(s) || s[j] != ';' {
		return 0
	}
	return j + 1
}

// numericReference is the length of &#[xX]hex+;? or &#dec+;? at the start
// of s, 0 when none: as the html package, it reads every digit.
func numericReference(s string) int {
	i, digit := 2, isDigit
	if s[2] == 'x' || s[2] == 'X' {
		i, digit = 3, isHexDigit
	}
	j := i
	for j < len(s) && digit(s[j]) {
		j++
	}
	if j == i {
		return 0
	}
	if j < len(s) && s[j] == ';' {
		j++
	}
	return j
}

// byteAt is s[i], 0 past its end.
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool { _, ok := unhex(c); return ok }

// decodeQuotedPrintable: =XX in either hex case, and soft line breaks
// ("=" and optional blanks before a line end) that decode to nothing, so a
// secret split across lines reads whole; '_' and ' ' fold together (a
// space is "_" in a header's encoded word).
func decodeQuotedPrintable(s string) *view {
	if !anyAt(s, '=', func(i int) bool { _, ok := hexPair(s, i+1); return ok || softBreak(s[i:]) > 0 }) {
		// An encoded word whose text needed no =XX still spells each
		// space '_': read the text itself with '_' as ' ', as the
		// percent reader reads '+'.
		if strings.IndexByte(s, '_') < 0 {
			return nil
		}
		return &view{text: s, fold: underscoreIsSpace}
	}
	w := newViewBuilder(len(s))
	escapes := 0
	for i := 0; i < len(s); {
		if s[i] == '=' {
			if b, ok := hexPair(s, i+1); ok {
				w.add(string([]byte{b}), i, i+3)
				i += 3
				escapes++
				continue
			}
			if n := softBreak(s[i:]); n > 0 {
				w.hold(i)
				i += n
				escapes++
				continue
			}
		}
		w.add(s[i:i+1], i, i+1)
		i++
	}
	if escapes == 0 {
		return nil
	}
	return w.view(underscoreIsSpace)
}

func underscoreIsSpace(c byte) byte {
	if c == '_' {
		return ' '
	}
	return c
}

// softBreak is the length of the soft line break s starts with, 0 when
// none.
func softBreak(s string) int {
	j := 1
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j < len(s) && s[j] == '\r' {
		j++
	}
	if j < len(s) && s[j] == '\n' {
		return j + 1
	}
	return 0
}
