package suppression

import (
	"bytes"
	"strings"
	"testing"
)

// Who a suppression line names, rule by rule.
func TestIdentity(t *testing.T) {
	t.Parallel()
	ada := HashHex("ada@example.com")
	for _, tc := range []struct {
		name, given, hash string
		email             string
		sha               string // hex; "" for none
		reason            string // prefix of the one reason; "" for none
	}{
		{"address", "Ada@Example.com", "", "ada@example.com", ada, ""},
		{"address and its hash", "ada@example.com", ada, "ada@example.com", ada, ""},
		{"hash alone", "", ada, "", ada, ""},
		{"hash of another address", "bob@example.com", ada, "bob@example.com", HashHex("bob@example.com"), "email_sha256 is not the SHA-256 of the address"},
		{"bad hash", "", "xyz", "", "", "email_sha256 is not a SHA-256"},
		{"bad address", "not an address", "", "", "", "email "},
		{"nothing", "", "", "", "", "no email (and no email_sha256)"},
	} {
		email, sha, reasons := identity(tc.given, tc.hash)
		wantSHA, _ := ParseHashHex(tc.sha)
		reasonOK := tc.reason == "" && len(reasons) == 0 || len(reasons) == 1 && strings.HasPrefix(reasons[0], tc.reason) && tc.reason != ""
		if email != tc.email || !bytes.Equal(sha, wantSHA) || !reasonOK {
			t.Errorf("%s: %q %x %q; want %q %s %q", tc.name, email, sha, reasons, tc.email, tc.sha, tc.reason)
		}
	}
}
