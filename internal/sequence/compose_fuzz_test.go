package sequence

import (
	"bytes"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"
)

// composeFuzzCampaign puts every lead field into every place a template
// can reach: the subject, the body and the unsubscribe URL.
const composeFuzzCampaign = `workspace: acme
name: q4
unsubscribe_url: "https://acme.example/u?e={{.Email}}&n={{.FirstName}}"
mailboxes:
  - address: sdr01@acme.test
    name: SDR One
    smtp_url: smtp://127.0.0.1:2525
steps:
  - subject: "{{.FirstName}} {{.LastName}} at {{.Company}} ({{.Domain}}) {{.Email}}"
    body: "{{.FirstName}}\n{{.LastName}}\n{{.Company}}\n{{.Email}}"
  - delay: 72h
    body: "again {{.FirstName}}"
`

// FuzzComposeHeaders renders the full message bytes for arbitrary lead
// fields and parses the headers back: no CR, LF or header-shaped value in
// any lead field can add a header or a recipient.
func FuzzComposeHeaders(f *testing.F) {
	c, err := ParseCampaign(strings.NewReader(composeFuzzCampaign))
	if err != nil {
		f.Fatal(err)
	}
	f.Add("Ada", "Lovelace", "Analytical", "ada@analytical.example", "analytical.example")
	f.Add("Ada\r\nBcc: victim@evil.example", "L\nX-Injected: 1", "C\r\n\r\nbody", "ada@a.example", "a.example")
	f.Add("=?utf-8?q?=0D=0ABcc:_x@evil.example?=", "\u2028Bcc: y@evil.example", "\x00\x1b", "ada@a.example\r\nBcc: z@evil.example", "a.example")
	f.Add("Ada", "L", "C", "a@b.example, c@d.example", "b.example")
	f.Add(strings.Repeat("Ä", 200), "\t\v\f", ":", "\"a\\\"b\"@c.example", "c.example")
	want := []string{"Content-Transfer-Encoding", "Content-Type", "Date", "From", "In-Reply-To", "List-Unsubscribe", "List-Unsubscribe-Post",
		"Message-Id", "Mime-Version", "References", "Subject", "To", "User-Agent", "X-Mailer"}
	f.Fuzz(func(t *testing.T, first, last, company, email, domain string) {
		lead := Lead{FirstName: first, LastName: last, Company: company, Email: email, Domain: domain}
		for step, thread := range [][]string{nil, {"one@acme.test"}} {
			msg, err := c.Compose(step, lead, c.Mailboxes[0], "m1@acme.test", thread)
			if err != nil {
				t.Fatalf("compose: %v", err)
			}
			gm, err := buildMsg(msg, time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
			if err != nil {
				return // an unusable recipient is refused before any byte is written
			}
			var raw bytes.Buffer
			if _, err := gm.WriteTo(&raw); err != nil {
				return
			}
			parsed, err := mail.ReadMessage(&raw)
			if err != nil {
				t.Fatalf("the rendered message does not parse: %v\n%s", err, raw.String())
			}
			for key := range parsed.Header {
				if !slices.Contains(want, key) {
					t.Fatalf("lead fields added header %q:\n%s", key, raw.String())
				}
			}
			for _, key := range []string{"From", "To", "Subject", "Message-Id"} {
				if n := len(parsed.Header[key]); n != 1 {
					t.Fatalf("%d %s headers:\n%s", n, key, raw.String())
				}
			}
			to, err := mail.ParseAddressList(parsed.Header.Get("To"))
			if err != nil || len(to) != 1 {
				t.Fatalf("To is not one address (%v): %q", err, parsed.Header.Get("To"))
			}
		}
	})
}
