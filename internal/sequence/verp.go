package sequence

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// VERP (variable envelope return path): a mailbox that opts in (verp: true)
// sends each message with its own return path,
//
//	local+b.<ref>.<mac>@domain
//
// where ref is the message's Message-ID left part (ours are base32) and mac
// an HMAC-SHA256 of the mailbox address and ref under the mailbox's secret.
// A delivery report comes back to that address: the inbox tick reads the
// message it is about from the address alone, and only a return path we
// made verifies. The mailbox's server must deliver sub-addresses
// (local+tag@domain) to the mailbox, and accept them as MAIL FROM.

// verpTag starts the sub-address of a return path.
const verpTag = "+b."

// verpMACBytes is the MAC's length before base32 (16 characters).
const verpMACBytes = 10

// localPartMax is RFC 5321's limit on a local part.
const localPartMax = 64

var verpEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// ReturnPath is the return path of the message messageID sent from
// address under secret, or "" when the message keeps the plain address
// (VERP off, a Message-ID we did not make, or a local part too long).
func ReturnPath(address, messageID string, secret []byte) string {
	local, domain, ok := splitAddress(address)
	ref, _, _ := strings.Cut(messageID, "@")
	if !ok || len(secret) == 0 || !isBase32(ref) {
		return ""
	}
	ref = strings.ToLower(ref)
	lp := local + verpTag + ref + "." + verpMAC(address, ref, secret)
	if len(lp) > localPartMax {
		return ""
	}
	return lp + "@" + domain
}

// VERPMessageID reads a return path of address back: the Message-ID it
// was made for, when addr is one and its MAC verifies under secret.
// Servers may change the case of a local part, so case does not matter.
func VERPMessageID(address, addr string, secret []byte) (string, bool) {
	local, domain, ok := splitAddress(address)
	gotLocal, gotDomain, ok2 := splitAddress(strings.ToLower(strings.TrimSpace(addr)))
	if !ok || !ok2 || len(secret) == 0 || gotDomain != strings.ToLower(domain) {
		return "", false
	}
	rest, ok := strings.CutPrefix(gotLocal, strings.ToLower(local)+verpTag)
	if !ok {
		return "", false
	}
	ref, mac, ok := strings.Cut(rest, ".")
	if !ok || !isBase32(ref) || !hmac.Equal([]byte(mac), []byte(verpMAC(address, ref, secret))) {
		return "", false
	}
	// NewMessageID made it: upper-case base32, then the address's domain.
	return strings.ToUpper(ref) + "@" + domain, true
}

func verpMAC(address, ref string, secret []byte) string {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(strings.ToLower(address)))
	h.Write([]byte{0})
	h.Write([]byte(ref))
	return strings.ToLower(verpEncoding.EncodeToString(h.Sum(nil)[:verpMACBytes]))
}

func splitAddress(a string) (local, domain string, ok bool) {
	at := strings.LastIndexByte(a, '@')
	if at <= 0 || at == len(a)-1 {
		return "", "", false
	}
	return a[:at], a[at+1:], true
}

func isBase32(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return s != ""
}
