package address_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/address"
)

func TestCanonicalSpellingsOfOneAddressAgree(t *testing.T) {
	t.Parallel()
	for _, group := range [][]string{
		{"jorg@bücher.example", "jorg@xn--bcher-kva.example", "Jorg@BÜCHER.example", " jorg@XN--BCHER-KVA.EXAMPLE "},
		{"zo\u00eb@example.com", "zoe\u0308@example.com", "ZOË@Example.COM"},
		{"ana@example.com", "ANA@example.com.", "ana@ｅｘａｍｐｌｅ.com"},
	} {
		want, err := address.Canonical(group[0])
		if err != nil {
			t.Fatalf("Canonical(%q): %v", group[0], err)
		}
		for _, s := range group[1:] {
			got, err := address.Canonical(s)
			if err != nil || got != want {
				t.Errorf("Canonical(%q) = %q, %v; want %q (same as %q)", s, got, err, want, group[0])
			}
		}
	}
	if got := address.MustCanonical("jorg@bücher.example"); got != "jorg@xn--bcher-kva.example" {
		t.Errorf("IDN domain = %q, want the A-label form", got)
	}
	if got := address.MustCanonical("zoe\u0308@example.com"); got != "zo\u00eb@example.com" {
		t.Errorf("NFD local part = %q, want NFC", got)
	}
}

func TestCanonicalRefusesDisguises(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"\u202eana@example.com", // right-to-left override
		"ana\u2066@example.com", // left-to-right isolate
		"an\u200ba@example.com", // zero-width space
		"ana@exa\u00admple.com", // soft hyphen
		"ana\x00@example.com",   // NUL
		"an a@example.com",      // space
		"ana\r\n@example.com",   // header injection
		"ana@example.com\u200f", // right-to-left mark
		"",                      // empty
		"ana",                   // no @
		"@example.com",          // no local part
		"ana@",                  // no domain
		"ana@exa_mple..com",     // empty label
		"ana@example.com..",     // empty last label (fuzz: 0@0.. -> 0@0. -> 0@0)
		"ana@.",                 // only the root
		"a@b@example.com",       // two @
		"ana@" + strings.Repeat("a", 64) + ".com", // label too long
		"\xffana@example.com",                     // not UTF-8
	} {
		got, err := address.Canonical(s)
		if err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", s, got)
			continue
		}
		if !errors.Is(err, address.ErrInvalid) {
			t.Errorf("Canonical(%q) error %v does not wrap ErrInvalid", s, err)
		}
	}
	_, err := address.Canonical("\u202eana@example.com")
	if err == nil || !strings.Contains(err.Error(), "U+202E") {
		t.Errorf("error %v should name the code point U+202E", err)
	}
}

func TestLocalIsASCII(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"ana@example.com":           true,
		"ana@xn--bcher-kva.example": true,
		"zoë@example.com":           false,
		"用户@example.com":            false,
	} {
		if got := address.LocalIsASCII(s); got != want {
			t.Errorf("LocalIsASCII(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"jorg@bücher.example", "zoe\u0308@example.com", "\u202eana@example.com", "a@b", "\"a@b\"@example.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := address.Canonical(s)
		if err != nil {
			return
		}
		again, err := address.Canonical(c)
		if err != nil || again != c {
			t.Fatalf("Canonical is not idempotent: %q -> %q -> %q, %v", s, c, again, err)
		}
		if !address.LocalIsASCII(c) && address.Domain(c) != strings.ToLower(address.Domain(c)) {
			t.Fatalf("domain of %q is not lower case", c)
		}
	})
}
