package inbox

import (
	_ "embed"
	"strings"
	"unicode"
)

// A reply that asks to stop ("unsubscribe", "remove me", "STOP", "수신거부")
// ends its sequence as 'unsubscribed' and suppresses the address, as the
// law and the mailbox providers expect of a sender; the words are in
// unsubscribe_words.txt.

//go:embed unsubscribe_words.txt
var unsubscribeWordsFile string

type unsubscribeWords struct {
	polite, line, phrase []string
}

var unsubscribeList = parseUnsubscribeWords(unsubscribeWordsFile)

func parseUnsubscribeWords(file string) unsubscribeWords {
	var w unsubscribeWords
	var section *[]string
	for _, line := range strings.Split(file, "\n") {
		line = strings.TrimSpace(line)
		switch line {
		case "", "#":
			continue
		case "[polite]":
			section = &w.polite
		case "[line]":
			section = &w.line
		case "[phrase]":
			section = &w.phrase
		default:
			if strings.HasPrefix(line, "#") || section == nil {
				continue
			}
			*section = append(*section, normalizeWords(line))
		}
	}
	return w
}

// asksToUnsubscribe reports whether a reply asks to be removed: one of its
// first lines says so, or its subject (without Re:) is only that. A phrase
// inside the subject does not count: it is usually our own subject, which
// may well say "stop sending invoices by hand".
func asksToUnsubscribe(subject string, lines []string) bool {
	if unsubscribeList.isLine(normalizeWords(subject)) {
		return true
	}
	for _, l := range lines {
		if l := normalizeWords(l); unsubscribeList.hasPhrase(l) || unsubscribeList.isLine(l) {
			return true
		}
	}
	return false
}

// hasPhrase: the line contains a [phrase].
func (w unsubscribeWords) hasPhrase(line string) bool {
	padded := " " + line + " "
	for _, p := range w.phrase {
		if isASCII(p) && strings.Contains(padded, " "+p+" ") || !isASCII(p) && strings.Contains(line, p) {
			return true
		}
	}
	return false
}

// isLine: the line, politeness aside, is a [line].
func (w unsubscribeWords) isLine(line string) bool {
	if line == "" {
		return false
	}
	bare := " " + line + " "
	for _, p := range w.polite {
		for strings.Contains(bare, " "+p+" ") { // "please please stop"
			bare = strings.ReplaceAll(bare, " "+p+" ", " ")
		}
	}
	bare = strings.TrimSpace(bare)
	for _, l := range w.line {
		if bare == l {
			return true
		}
	}
	return false
}

// normalizeWords lowers s, drops apostrophes, turns other punctuation into
// spaces and collapses them.
func normalizeWords(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\'' || r == '’':
			return -1
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return unicode.ToLower(r)
		}
		return ' '
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
