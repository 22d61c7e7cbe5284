package unsubscribe_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/unsubscribe"
)

func TestTokenRoundTrip(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, unsubscribe.KeySize)
	other := bytes.Repeat([]byte{8}, unsubscribe.KeySize)
	for _, id := range []int64{1, 4711, 1 << 40} {
		tok := unsubscribe.Sign(key, id)
		if len(tok) != unsubscribe.TokenLen || strings.Trim(tok, "abcdefghijklmnopqrstuvwxyz234567") != "" {
			t.Fatalf("token %q: want %d characters of a-z2-7", tok, unsubscribe.TokenLen)
		}
		if got, err := unsubscribe.Parse(tok); err != nil || got != id {
			t.Errorf("Parse(Sign(%d)) = %d, %v", id, got, err)
		}
		if !unsubscribe.Verify(key, tok) || !unsubscribe.Verify(key, strings.ToUpper(tok)) {
			t.Errorf("token of %d does not verify under its key (or in upper case)", id)
		}
		if unsubscribe.Verify(other, tok) {
			t.Errorf("token of %d verifies under another key", id)
		}
		// Any changed character breaks the MAC or the id.
		for i := range tok {
			b := []byte(tok)
			b[i] = map[bool]byte{true: 'b', false: 'a'}[b[i] == 'a']
			if unsubscribe.Verify(key, string(b)) {
				t.Errorf("token with character %d changed still verifies", i)
			}
		}
	}
	for _, bad := range []string{"", "abc", strings.Repeat("a", unsubscribe.TokenLen), strings.Repeat("1", unsubscribe.TokenLen), unsubscribe.Sign(key, 5) + "a"} {
		if _, err := unsubscribe.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
