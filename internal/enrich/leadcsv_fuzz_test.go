package enrich_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/enrich"
)

// FuzzParseLeadCSV feeds arbitrary bytes to the lead CSV reader `import
// leads` streams with: it must never panic, and every line it accepts must
// be importable as is. (Repeated external_ids are the import's to merge.)
func FuzzParseLeadCSV(f *testing.F) {
	f.Add([]byte("external_id,first_name,last_name,company_domain,email,timezone\ncrm-1,Ada,Lovelace,analytical.example,,Europe/London\ncrm-2,Alan,Turing,bletchley.example,alan@bletchley.example,\n"))
	f.Add([]byte("first_name,last_name,company_domain\n\"Ada\r\nBcc: x@evil.example\",L,a.example\n"))
	f.Add([]byte("\ufefffirst_name,last_name,company_domain\nA,B,xn--bcher-kva.example\nA,B,b\u00fccher.example\n"))
	f.Add([]byte("first_name,last_name,company_domain,external_id\nA,B,c.example,1\nA,B,c.example,1\n\"unclosed,B,c.example,2\n"))
	f.Add([]byte("first_name,last_name,company_domain,timezone\nA,B,c.example,../../etc/passwd\nA,B,c.example,Local\n"))
	f.Add([]byte("first_name,first_name,company_domain\n"))
	f.Add([]byte("first_name,last_name,company_domain,email\nA,B,c.example,J\u00f6rg@B\u00fcCHER.example\nA,B,c.example,zoe\u0308@x.example\nA,B,c.example,\u202ea@x.example\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		records, invalid, err := readLeadCSV(bytes.NewReader(data))
		if err != nil {
			return
		}
		lastLine := 0
		lines := map[int]bool{}
		for _, r := range records {
			for _, v := range []string{r.ExternalID, r.FirstName, r.LastName, r.Company, r.Domain, r.Email, r.Timezone} {
				if !utf8.ValidString(v) || utf8.RuneCountInString(v) > enrich.ImportMaxFieldLen || v != strings.TrimSpace(v) {
					t.Fatalf("line %d: accepted value %q", r.Line, v)
				}
			}
			if r.Domain != strings.ToLower(r.Domain) || r.Email != strings.ToLower(r.Email) {
				t.Fatalf("line %d: domain %q or email %q not lower-case", r.Line, r.Domain, r.Email)
			}
			if c, err := address.Canonical(r.Email); r.Email != "" && (err != nil || c != r.Email) {
				t.Fatalf("line %d: accepted email %q is not canonical (%q, %v)", r.Line, r.Email, c, err)
			}
			if r.Email == "" && (r.Domain == "" || r.FirstName == "" && r.LastName == "") {
				t.Fatalf("line %d: accepted a lead with nothing to enrich from: %+v", r.Line, r)
			}
			if r.Line <= lastLine {
				t.Fatalf("line numbers out of order: %d after %d", r.Line, lastLine)
			}
			lastLine = r.Line
			lines[r.Line] = true
		}
		for _, le := range invalid {
			if lines[le.Line] || le.Reason == "" {
				t.Fatalf("line %d both accepted and rejected, or rejected without a reason (%q)", le.Line, le.Reason)
			}
		}
	})
}
