// Package address gives an email address its one canonical spelling, the
// form every comparison uses: lead dedupe, enrollment, campaign_recipients,
// suppressions and the hash `lead forget` keeps. Two spellings of one
// mailbox (an IDN domain in Unicode or in Punycode, a local part in NFC or
// NFD, upper or lower case) canonicalize to the same string, so one person
// is mailed once and one suppression covers every spelling.
package address

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
)

// ErrInvalid is wrapped by every error Canonical returns.
var ErrInvalid = errors.New("invalid email address")

// lookup maps and validates a domain the way a resolver would before a DNS
// query (UTS #46, lookup profile): full-width and upper-case letters are
// mapped, disallowed code points and bidi-rule violations are refused.
var lookup = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.VerifyDNSLength(true),
)

// Canonical returns the canonical spelling of an email address: surrounding
// white space trimmed, the domain in IDNA A-label form and lower case, the
// local part in Unicode NFC and lower case. Case is folded in the local part
// too because the CSV import and the suppression list always did (the
// mailbox providers people send to treat it so); the form only identifies a
// person, it is what gets compared.
//
// Bidi controls, other format characters (zero-width joiners, soft
// hyphens, BOM), control characters and white space are refused anywhere in
// the address: they make one address look like another, or like nothing.
func Canonical(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalid)
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: not valid UTF-8", ErrInvalid)
	}
	if r, ok := refused(s); ok {
		return "", fmt.Errorf("%w: contains %s U+%04X", ErrInvalid, refusedKind(r), r)
	}
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return "", fmt.Errorf("%w: %q is not like name@example.com", ErrInvalid, s)
	}
	local, domain := s[:at], s[at+1:]
	if strings.ContainsRune(local, '@') && !(strings.HasPrefix(local, `"`) && strings.HasSuffix(local, `"`)) {
		return "", fmt.Errorf("%w: %q has more than one @", ErrInvalid, s)
	}
	// One trailing dot is the DNS root (example.com. is example.com); a
	// second is an empty label, which the IDNA lookup profile lets through
	// and a second Canonical would then strip: never idempotent.
	bare := strings.TrimSuffix(domain, ".")
	if strings.HasSuffix(bare, ".") {
		return "", fmt.Errorf("%w: domain %q has an empty label", ErrInvalid, domain)
	}
	ascii, err := lookup.ToASCII(bare)
	if err != nil {
		return "", fmt.Errorf("%w: domain %q: %v", ErrInvalid, domain, err)
	}
	if ascii == "" {
		return "", fmt.Errorf("%w: %q has no domain", ErrInvalid, s)
	}
	local = norm.NFC.String(strings.ToLower(norm.NFC.String(local)))
	return local + "@" + strings.ToLower(ascii), nil
}

// Key is the spelling an address column holds: the canonical one, or, for
// an address that has none (a row stored before canonical spellings, a
// bounce naming garbage), the trimmed input as is, so that it still
// compares equal to itself.
func Key(s string) string {
	if c, err := Canonical(s); err == nil {
		return c
	}
	return strings.TrimSpace(s)
}

// MustCanonical is Canonical for addresses the caller already validated
// (tests, constants); it panics on an invalid one.
func MustCanonical(s string) string {
	c, err := Canonical(s)
	if err != nil {
		panic(err)
	}
	return c
}

// Domain returns the canonical address's domain (after the last @).
func Domain(canonical string) string {
	return canonical[strings.LastIndexByte(canonical, '@')+1:]
}

// LocalIsASCII reports whether the address's local part is plain ASCII. A
// local part that is not needs a server offering SMTPUTF8 (RFC 6531); the
// domain never does, once canonical, since it is in A-label form.
func LocalIsASCII(addr string) bool {
	at := strings.LastIndexByte(addr, '@')
	if at < 0 {
		at = len(addr)
	}
	for i := 0; i < at; i++ {
		if addr[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// refused reports the first rune an address may never contain.
func refused(s string) (rune, bool) {
	for _, r := range s {
		if unicode.Is(unicode.Bidi_Control, r) || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) || unicode.IsSpace(r) {
			return r, true
		}
	}
	return 0, false
}

func refusedKind(r rune) string {
	switch {
	case unicode.Is(unicode.Bidi_Control, r):
		return "the bidi control character"
	case unicode.IsSpace(r):
		return "the white space"
	case unicode.Is(unicode.Cc, r):
		return "the control character"
	default:
		return "the invisible format character"
	}
}
