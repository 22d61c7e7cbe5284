package sequence

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzParseCampaign feeds arbitrary YAML to the campaign parser: it must
// never panic, and a campaign it accepts must compose every step for any
// lead.
func FuzzParseCampaign(f *testing.F) {
	example, err := os.ReadFile("../../examples/campaign.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte("workspace: acme\nname: q4\nmailboxes:\n  - address: a@acme.test\n    smtp_url: smtp://127.0.0.1:2525\nsteps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"{{.Company}}\"\n  - delay: 72h\n    body: again\n"))
	f.Add([]byte("workspace: acme\nname: q4\nunsubscribe_url: \"https://x.example/u?e={{.Email}}\"\nmailboxes:\n  - address: a@acme.test\n    smtp_url: smtps://u@mail.example\n    password_env: PW\nsteps:\n  - subject: \"{{.Nope}}\"\n    body: x\n"))
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"))
	f.Add([]byte("workspace: acme\nname: q4\nmailboxes:\n  - address: a@acme.test\n    smtp_url: smtp://u:pw@h\nsteps: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCampaign(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(c.Steps) == 0 || len(c.Mailboxes) == 0 {
			t.Fatalf("accepted a campaign with %d steps and %d mailboxes", len(c.Steps), len(c.Mailboxes))
		}
		for _, mb := range c.Mailboxes {
			if mb.SMTP.Host == "" || mb.SMTP.Port < 1 || mb.SMTP.Username != "" && mb.PasswordEnv == "" {
				t.Fatalf("accepted mailbox %+v", mb)
			}
		}
		// A template may still fail on a particular lead (index out of
		// range); it must fail as an error, and a composed subject is one line.
		lead := Lead{FirstName: "Ada\r\nBcc: x@evil.example", LastName: "L", Company: "C", Email: "ada@lead.example", Domain: "lead.example"}
		for i := range c.Steps {
			msg, err := c.Compose(i, lead, c.Mailboxes[0], "id@acme.test", nil)
			if err == nil && strings.ContainsAny(msg.Subject+strings.Join(msg.ListUnsubscribe, ""), "\r\n") {
				t.Fatalf("step %d composed a multi-line subject %q or unsubscribe URL %q", i, msg.Subject, msg.ListUnsubscribe)
			}
		}
	})
}
