// Package suppression owns the list of addresses that are never mailed
// again: its CSV import and export, the SHA-256 (of the address's
// address.Canonical spelling) that keys it, and forgetting a person
// (`rindactl lead forget`), which leaves only that hash.
package suppression

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"

	"golang.org/x/net/idna"
)

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
