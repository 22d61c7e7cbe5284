package enrich

import (
	"slices"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/store"
)

// What makes a parsed lead unusable, rule by rule.
func TestLeadProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		lead store.LeadImport
		want []string // prefixes of the reasons, in order
	}{
		{"name at a domain", store.LeadImport{FirstName: "Ada", Domain: "example.com"}, nil},
		{"address alone", store.LeadImport{Email: "ada@example.com"}, nil},
		{"last name alone", store.LeadImport{LastName: "Lovelace", Domain: "example.com"}, nil},
		{"no domain, no address", store.LeadImport{FirstName: "Ada"}, []string{"no email and no company_domain"}},
		{"no name, no address", store.LeadImport{Domain: "example.com"}, []string{"no email and no first_name or last_name"}},
		{"bad domain", store.LeadImport{FirstName: "Ada", Domain: "https://example.com"}, []string{`company_domain "https://example.com" is not a domain`}},
		{"bad domain beside an address", store.LeadImport{Email: "ada@example.com", Domain: "example"}, []string{`company_domain "example" is not a domain`}},
		{"time zone", store.LeadImport{FirstName: "Ada", Domain: "example.com", Timezone: "Europe/Paris"}, nil},
		{"unknown time zone", store.LeadImport{FirstName: "Ada", Domain: "example.com", Timezone: "Mars/Olympus"}, []string{`timezone "Mars/Olympus"`}},
		{"local is no zone", store.LeadImport{FirstName: "Ada", Domain: "example.com", Timezone: "Local"}, []string{`timezone "Local"`}},
		{"everything wrong", store.LeadImport{Domain: "bad domain", Timezone: "nowhere"}, []string{"company_domain", "no email and no first_name", "timezone"}},
	} {
		got := leadProblems(tc.lead)
		ok := len(got) == len(tc.want) && !slices.ContainsFunc(tc.want, func(w string) bool {
			return !strings.HasPrefix(got[slices.Index(tc.want, w)], w)
		})
		if !ok {
			t.Errorf("%s: %q, want reasons starting %q", tc.name, got, tc.want)
		}
	}
}

func TestValidDomain(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"example.com": true, "a-b.example": true, "xn--bcher-kva.example": true, "bücher.example": true, "1.2": true,
		"example": false, "-a.example": false, "a-.example": false, "a..example": false, "a_b.example": false,
		"a b.example": false, "example.com/": false, strings.Repeat("a", 64) + ".example": false,
		strings.Repeat("a.", 127) + "ab": false, "Example.com": false,
	} {
		if got := validDomain(s); got != want {
			t.Errorf("validDomain(%q) = %v, want %v", s, got, want)
		}
	}
}
