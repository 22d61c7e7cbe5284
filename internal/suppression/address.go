// Package suppression owns the list of addresses that are never mailed
// again: its CSV import and export, the SHA-256 that keys it, and forgetting
// a person (`rindactl lead forget`), which leaves only that hash.
package suppression

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
)

// Canonical is the one spelling of an address that the suppression list
// and its hash are defined on: trimmed, the local part NFC and lower case,
// the domain in IDNA A-label form, lower case. It refuses control, format
// (bidi overrides) and space characters.
//
// TODO(issue 25b): call address.Canonical once internal/address lands on
// main; this is the one place this package normalises an address.
func Canonical(s string) (string, error) {
	s = strings.TrimSpace(s)
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return "", fmt.Errorf("%q is not an address like name@example.com", s)
	}
	local, domain := s[:at], s[at+1:]
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%q is not valid UTF-8", s)
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) {
			return "", fmt.Errorf("%q holds a control, format or space character (U+%04X)", s, r)
		}
	}
	ascii, err := idna.Lookup.ToASCII(domain)
	if err != nil || !strings.Contains(ascii, ".") {
		return "", fmt.Errorf("%q: the domain %q is not a domain like example.com", s, domain)
	}
	return norm.NFC.String(strings.ToLower(local)) + "@" + strings.ToLower(ascii), nil
}

// HashSize is the length of an address hash in bytes.
const HashSize = sha256.Size

// Hash is the key of an address in the suppression list: the SHA-256 of its
// canonical form. Postgres computes the same with address_sha256() for an
// address stored canonical.
func Hash(canonical string) []byte {
	h := sha256.Sum256([]byte(canonical))
	return h[:]
}

// HashHex is Hash in lower-case hex, as exports and audit rows write it.
func HashHex(canonical string) string { return hex.EncodeToString(Hash(canonical)) }

// ParseHashHex reads a hash written by HashHex.
func ParseHashHex(s string) ([]byte, error) {
	h, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(h) != HashSize {
		return nil, errors.New("not a SHA-256 in hex (64 characters 0-9a-f)")
	}
	return h, nil
}

// Spellings are the lower-case spellings an address may be stored under:
// the canonical one, as given, and with the domain in Unicode (U-labels),
// without repeats. Forgetting looks for all of them.
func Spellings(given, canonical string) []string {
	out := []string{canonical}
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	add(strings.ToLower(strings.TrimSpace(given)))
	at := strings.LastIndexByte(canonical, '@')
	if u, err := idna.ToUnicode(canonical[at+1:]); err == nil {
		add(canonical[:at+1] + u)
	}
	return out
}
