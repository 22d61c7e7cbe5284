package enrich_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/store"
)

// readLeadCSV reads a whole CSV the way `import leads` streams it: the
// accepted lines and the rejected ones, or the error that stops the read
// (a broken header, a CSV syntax error).
func readLeadCSV(in io.Reader) (records []store.LeadImport, invalid []enrich.LineError, err error) {
	lr, err := enrich.NewLeadReader(in)
	if err != nil {
		return nil, nil, err
	}
	for {
		rec, bad, err := lr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return records, invalid, nil
		case err != nil:
			return nil, nil, err
		case bad != nil:
			invalid = append(invalid, *bad)
		default:
			records = append(records, rec)
		}
	}
}

func TestLeadReaderReportsEveryBadLine(t *testing.T) {
	t.Parallel()
	in := "\ufefffirst_name,last_name,company_domain,email,external_id,timezone\n" +
		"Ada,Lovelace,analytical.example,,a1,Europe/London\n" + // line 2 ok
		"Alan,Turing,,,a2,\n" + // 3: nothing to enrich from
		"Grace,Hopper,navy.example,grace@,a3,\n" + // 4: bad email
		"Edsger,Dijkstra,tue.example,,a4,Mars/Olympus\n" + // 5: bad zone
		"Barbara," + strings.Repeat("L", 1001) + ",mit.example,,a5,\n" + // 6: too long
		"Ken,Thompson,https://bell.example/,,a6,\n" + // 7: URL, not a domain
		"Dennis,Ritchie,bell.example,,a1,\n" + // 8: repeated external_id, ok here (the import merges it)
		"Linus,Torvalds,linux.example\n" + // 9: short line
		"\"Multi\nline\",Name,multi.example,,a9,\n" + // 10-11: quoted newline, ok
		",,,rob@plan9.example,a10,\n" // 12: email only, ok
	records, invalid, err := readLeadCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	wantLines := map[int]string{3: "nothing to enrich from", 4: "email", 5: "timezone", 6: "1001 characters", 7: "company_domain", 9: "fields"}
	if len(invalid) != len(wantLines) {
		t.Fatalf("invalid lines %v, want %d", invalid, len(wantLines))
	}
	for _, le := range invalid {
		if want, ok := wantLines[le.Line]; !ok || !strings.Contains(le.Reason, want) {
			t.Errorf("line %d: %q, want a reason mentioning %q", le.Line, le.Reason, want)
		}
	}
	if len(records) != 4 || records[1].Line != 8 || records[2].Line != 10 || records[3].Email != "rob@plan9.example" {
		t.Fatalf("records %+v", records)
	}
}

// Addresses are stored in their canonical spelling (IDNA A-label domain,
// NFC local part, lower case), and an address carrying a bidi or control
// character is refused with its line number.
func TestLeadReaderCanonicalAddresses(t *testing.T) {
	t.Parallel()
	in := "first_name,last_name,company_domain,email\n" +
		"Jorg,A,b.example,jorg@b\u00fccher.example\n" + // 2
		"Jorg,B,b.example,JORG@xn--bcher-kva.example\n" + // 3
		"Zoe,C,z.example,zo\u00eb@example.com\n" + // 4: NFC
		"Zoe,D,z.example,zoe\u0308@example.com\n" + // 5: NFD
		"Eve,E,e.example,\u202eeve@example.com\n" + // 6: right-to-left override
		"Eve,F,e.example,eve\u200b@example.com\n" // 7: zero-width space
	records, invalid, err := readLeadCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"jorg@xn--bcher-kva.example", "jorg@xn--bcher-kva.example", "zo\u00eb@example.com", "zo\u00eb@example.com"}
	if len(records) != len(want) {
		t.Fatalf("records %+v, want %d", records, len(want))
	}
	for i, r := range records {
		if r.Email != want[i] {
			t.Errorf("line %d: email %q, want %q", r.Line, r.Email, want[i])
		}
	}
	if len(invalid) != 2 || invalid[0].Line != 6 || !strings.Contains(invalid[0].Reason, "U+202E") || invalid[1].Line != 7 || !strings.Contains(invalid[1].Reason, "U+200B") {
		t.Errorf("invalid lines %+v, want lines 6 (U+202E) and 7 (U+200B)", invalid)
	}
}

func TestLeadReaderHeaderAndSyntaxErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"first_name,last_name,company_domain,phone\n":       `unknown column "phone"`,
		"first_name,company_domain\n":                       "lacks required column(s) last_name",
		"first_name,last_name,company_domain,email,email\n": "twice",
		"": "empty",
		"first_name,last_name,company_domain\n\"Ada,Lovelace,x.example\n": "line 2",
	}
	for in, want := range cases {
		_, _, err := readLeadCSV(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error mentioning %q", in, err, want)
		}
	}
}

func TestBackoffFullJitterWithinCap(t *testing.T) {
	t.Parallel()
	b := enrich.Backoff{}
	for attempt := 1; attempt <= 40; attempt++ {
		ceiling := min(enrich.BackoffCapDefault, enrich.BackoffBaseDefault<<min(attempt-1, 20))
		for range 50 {
			if d := b.Delay(attempt); d < 0 || d > ceiling {
				t.Fatalf("attempt %d: delay %s outside [0, %s]", attempt, d, ceiling)
			}
		}
	}
	if d := b.Retry(1, 2*enrich.BackoffCapDefault); d != 2*enrich.BackoffCapDefault {
		t.Fatalf("Retry-After %s not honoured: %s", 2*enrich.BackoffCapDefault, d)
	}
}
