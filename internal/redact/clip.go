package redact

import (
	"strconv"
	"unicode/utf8"
)

// StoredMax bounds every error or reason text that is stored (sends.error,
// enrollments.last_error, mailboxes.pause_reason, ...) or logged: a server
// can answer with megabytes, and nobody reads past the first lines.
const StoredMax = 2 << 10

// Stored is text fit to store or log: secrets hidden (String) and at most
// StoredMax bytes. It cuts before it redacts, so a megabyte reply costs
// nothing, with room to spare so that no secret is cut in two and half
// shown: the second cut drops whatever the first one split.
func Stored(s string, secrets ...string) string {
	return Clip(String(Clip(s, 2*StoredMax), secrets...), StoredMax)
}

// Clip returns s cut to at most n bytes, on a rune boundary, ending with a
// note of how long it was.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	note := "… [" + strconv.Itoa(len(s)) + " bytes, cut]"
	if n <= len(note) {
		return cut(s, n)
	}
	return cut(s, n-len(note)) + note
}

// cut returns the longest prefix of s of at most n bytes that does not
// split a rune.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
