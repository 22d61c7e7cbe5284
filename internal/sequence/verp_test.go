package sequence

import (
	"strings"
	"testing"
)

var verpSecret = []byte("0123456789abcdef0123456789abcdef")

func TestReturnPath(t *testing.T) {
	t.Parallel()
	id := NewMessageID("sdr01@Acme.test")
	rp := ReturnPath("sdr01@Acme.test", id, verpSecret)
	if !strings.HasPrefix(rp, "sdr01+b.") || !strings.HasSuffix(rp, "@Acme.test") {
		t.Fatalf("return path %q", rp)
	}
	// Servers may lower-case the local part; the domain's case is free.
	for _, addr := range []string{rp, strings.ToLower(rp), strings.ToUpper(rp), " " + rp + " "} {
		if got, ok := VERPMessageID("sdr01@Acme.test", addr, verpSecret); !ok || got != id {
			t.Errorf("VERPMessageID(%q) = %q, %v; want %q", addr, got, ok, id)
		}
	}
	at := strings.IndexByte(rp, '@')
	for name, addr := range map[string]string{
		"other secret":   ReturnPath("sdr01@Acme.test", id, []byte("another secret")),
		"other mailbox":  ReturnPath("sdr02@Acme.test", id, verpSecret),
		"other domain":   rp[:at] + "@evil.test",
		"mac cut":        rp[:at-1] + rp[at:],
		"mac of another": strings.Replace(rp, strings.ToLower(id[:4]), "aaaa", 1),
		"plain address":  "sdr01@acme.test",
		"no mac":         "sdr01+b." + strings.ToLower(id[:26]) + "@acme.test",
	} {
		if got, ok := VERPMessageID("sdr01@Acme.test", addr, verpSecret); ok {
			t.Errorf("%s: %q verified as %q", name, addr, got)
		}
	}
	for name, rp := range map[string]string{
		"no secret":      ReturnPath("sdr01@acme.test", id, nil),
		"not ours":       ReturnPath("sdr01@acme.test", "<x.y>@acme.test", verpSecret),
		"local too long": ReturnPath(strings.Repeat("a", 30)+"@acme.test", id, verpSecret),
	} {
		if rp != "" {
			t.Errorf("%s: return path %q, want none", name, rp)
		}
	}
}

// FuzzVERPMessageID: only an address ReturnPath made verifies, and it names
// the message it was made for.
func FuzzVERPMessageID(f *testing.F) {
	id := "K7Q2ZP3M4N5B6V7CK7Q2ZP3M4N@acme.test"
	rp := ReturnPath("sdr01@acme.test", id, verpSecret)
	f.Add(rp)
	f.Add(strings.ToUpper(rp))
	f.Add("sdr01+b.k7q2zp3m4n5b6v7c.aaaaaaaaaaaaaaaa@acme.test")
	f.Add("sdr01+b..@acme.test")
	f.Add("sdr01@acme.test")
	f.Fuzz(func(t *testing.T, addr string) {
		got, ok := VERPMessageID("sdr01@acme.test", addr, verpSecret)
		if !ok {
			return
		}
		if back := ReturnPath("sdr01@acme.test", got, verpSecret); !strings.EqualFold(back, strings.TrimSpace(addr)) {
			t.Fatalf("%q verified as %q, whose return path is %q", addr, got, back)
		}
	})
}
