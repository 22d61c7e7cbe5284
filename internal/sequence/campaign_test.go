package sequence

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseCampaignExample(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../examples/campaign.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ParseCampaign(f)
	if err != nil {
		t.Fatalf("example campaign: %v", err)
	}
	if c.Workspace != "acme" || c.Name != "q4-outreach" {
		t.Errorf("workspace/name = %q/%q", c.Workspace, c.Name)
	}
	if len(c.Mailboxes) != 2 || len(c.Steps) != 3 {
		t.Fatalf("mailboxes=%d steps=%d, want 2 and 3", len(c.Mailboxes), len(c.Steps))
	}
	mb := c.Mailboxes[0]
	if mb.SMTP.TLS != TLSRequired || mb.SMTP.Port != 587 || mb.SMTP.Username != "sdr01" || mb.Cap.Daily != 400 {
		t.Errorf("mailbox 0 = %+v", mb)
	}
	if mb1 := c.Mailboxes[1]; mb1.SMTP.TLS != TLSImplicit || mb1.SMTP.Port != 465 ||
		mb1.IMAP == nil || mb1.IMAP.Port != 993 || mb1.Cap.Ramp == nil || mb1.Cap.Ramp.Start != 20 || mb1.Gap.Max != 3*time.Minute {
		t.Errorf("mailbox 1 = %+v", mb1)
	}
	if !c.FollowUpsFirst || c.Mailboxes[0].Cap.Ramp != nil || c.Mailboxes[0].IMAP != nil {
		t.Errorf("follow_ups_first = %v, mailbox 0 = %+v", c.FollowUpsFirst, c.Mailboxes[0])
	}
	if c.Steps[1].Delay != 72*time.Hour {
		t.Errorf("step 2 delay = %s", c.Steps[1].Delay)
	}
	if c.Window == nil || c.Window.Timezone != LeadTimezone || c.Window.Start != 9*60 || c.Window.End != 17*60 ||
		!c.Window.Days[time.Monday] || c.Window.Days[time.Saturday] {
		t.Errorf("window = %+v", c.Window)
	}
}

const validCampaign = `
workspace: acme
name: q4
mailboxes:
  - address: a@acme.test
    smtp_url: smtp://127.0.0.1:2525
steps:
  - delay: 0s
    subject: "Hi {{.FirstName}}"
    body: "Body"
  - delay: 72h
    body: "Follow"
`

func TestParseCampaignRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, old, new, want string
	}{
		{"bad duration", "delay: 72h", "delay: 3x", `steps[1].delay: invalid duration "3x"`},
		{"negative duration", "delay: 72h", "delay: -1h", `steps[1].delay: "-1h" is negative`},
		{"unknown top field", "name: q4", "name: q4\nnmae: x", "nmae: unknown field"},
		{"unknown nested field", "    smtp_url:", "    smtp_urll: x\n    smtp_url:", "mailboxes[0].smtp_urll: unknown field"},
		{"unknown step field", "body: \"Follow\"", "body: \"Follow\"\n    subjet: x", "steps[1].subjet: unknown field"},
		{"bad template syntax", "Hi {{.FirstName}}", "Hi {{.FirstName", "steps[0].subject: invalid template"},
		{"unknown template field", "body: \"Body\"", "body: \"{{.Title}}\"", "steps[0].body: invalid template"},
		{"bad smtp scheme", "smtp://127.0.0.1:2525", "http://127.0.0.1", `mailboxes[0].smtp_url: scheme "http"`},
		{"password in url", "smtp://127.0.0.1:2525", "smtp://u:hunter2@127.0.0.1", "mailboxes[0].smtp_url: the URL holds a password"},
		{"user without password_env", "smtp://127.0.0.1:2525", "smtp://u@127.0.0.1", "mailboxes[0].password_env: required"},
		{"bad tls param", "smtp://127.0.0.1:2525", "smtp://127.0.0.1?tls=maybe", "mailboxes[0].smtp_url: tls="},
		{"duplicate mailbox", "steps:", "  - address: A@acme.test\n    smtp_url: smtp://127.0.0.1\nsteps:", `mailboxes[1].address: "A@acme.test" is already mailboxes[0]`},
		{"follow-up subject", "body: \"Follow\"", "body: \"Follow\"\n    subject: new", "steps[1].subject: follow-ups reply"},
		{"missing first subject", "    subject: \"Hi {{.FirstName}}\"\n", "", "steps[0].subject: required"},
		{"bad window zone", "steps:", "window: {timezone: Mars/Base, days: [mon], start: \"09:00\", end: \"17:00\"}\nsteps:", "window.timezone: unknown zone"},
		{"bad window day", "steps:", "window: {timezone: lead, days: [mon, fun], start: \"09:00\", end: \"17:00\"}\nsteps:", `window.days[1]: "fun"`},
		{"window end before start", "steps:", "window: {timezone: UTC, days: [mon], start: \"17:00\", end: \"09:00\"}\nsteps:", "window.end:"},
		{"bad window clock", "steps:", "window: {timezone: UTC, days: [mon], start: \"9am\", end: \"17:00\"}\nsteps:", "window.start:"},
		{"invalid yaml", "name: q4", "name: [q4", "campaign YAML"},
		{"negative cap", "    smtp_url: smtp://127.0.0.1:2525", "    smtp_url: smtp://127.0.0.1:2525\n    daily_cap: -1", "mailboxes[0].daily_cap"},
		{"bad unsubscribe", "name: q4", "name: q4\nunsubscribe_url: mailto:x@y", "unsubscribe_url:"},
		{"bare helo", "    smtp_url: smtp://127.0.0.1:2525", "    smtp_url: smtp://127.0.0.1:2525\n    helo: vm", `mailboxes[0].helo: "vm" is not a fully qualified host name`},
		{"relative tls_ca", "    smtp_url: smtp://127.0.0.1:2525", "    smtp_url: smtp://127.0.0.1:2525\n    tls_ca: ca.pem", `mailboxes[0].tls_ca: "ca.pem" is not a clean absolute path`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := strings.Replace(validCampaign, tc.old, tc.new, 1)
			if doc == validCampaign {
				t.Fatalf("replacement %q not found", tc.old)
			}
			_, err := ParseCampaign(strings.NewReader(doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error leaks the password: %v", err)
			}
		})
	}
}

func TestParseCampaignSizeLimit(t *testing.T) {
	t.Parallel()
	doc := validCampaign + "# " + strings.Repeat("x", CampaignFileMaxBytesDefault) + "\n"
	_, err := ParseCampaign(strings.NewReader(doc))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v, want a size error", err)
	}
}

func TestParseCampaignValid(t *testing.T) {
	t.Parallel()
	c, err := ParseCampaign(strings.NewReader(validCampaign))
	if err != nil {
		t.Fatal(err)
	}
	if c.Window != nil || c.UnsubscribeURL != "" {
		t.Errorf("window=%v unsubscribe=%q, want none", c.Window, c.UnsubscribeURL)
	}
	if mb, ok := c.MailboxByAddress("A@ACME.TEST"); !ok || mb.SMTP.TLS != TLSOpportunistic {
		t.Errorf("MailboxByAddress = %+v, %v", mb, ok)
	}
	doc := strings.Replace(validCampaign, "    smtp_url: smtp://127.0.0.1:2525", "    smtp_url: smtp://127.0.0.1:2525\n    helo: out.acme.test\n    tls_ca: /etc/rindactl/corp-ca.pem", 1)
	if c, err = ParseCampaign(strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	if mb := c.Mailboxes[0]; mb.HELO != "out.acme.test" || mb.TLSCA != "/etc/rindactl/corp-ca.pem" {
		t.Errorf("helo/tls_ca = %q/%q", mb.HELO, mb.TLSCA)
	}
	if back, err := MailboxFromRecord(c.Record().Mailboxes[0]); err != nil || back.HELO != "out.acme.test" || back.TLSCA != "/etc/rindactl/corp-ca.pem" {
		t.Errorf("stored and read back: %+v %v", back, err)
	}
}

// A mailbox's sending settings beside its SMTP URL, each rule on its own.
func TestMailboxCheckSending(t *testing.T) {
	t.Parallel()
	ok := mailboxFile{PasswordEnv: "RINDA_SMTP_PASSWORD", DailyCap: 50, HELO: "mail.example.com", TLSCA: "/etc/rindactl/ca.pem"}
	for _, tc := range []struct {
		name     string
		edit     func(*mailboxFile)
		withUser bool
		want     string // "" for valid
	}{
		{"valid", func(*mailboxFile) {}, true, ""},
		{"no user, no password", func(f *mailboxFile) { f.PasswordEnv = "" }, false, ""},
		{"user without password", func(f *mailboxFile) { f.PasswordEnv = "" }, true, "m.password_env: required when smtp_url has a user"},
		{"bad variable name", func(f *mailboxFile) { f.PasswordEnv = "1PASS" }, true, `m.password_env: "1PASS" is not an environment variable name`},
		{"negative cap", func(f *mailboxFile) { f.DailyCap = -1 }, true, "m.daily_cap: -1 is negative"},
		{"no cap", func(f *mailboxFile) { f.DailyCap = 0 }, true, ""},
		{"bare greeting name", func(f *mailboxFile) { f.HELO = "vm" }, true, `m.helo: "vm" is not a fully qualified host name`},
		{"address literal", func(f *mailboxFile) { f.HELO = "[192.0.2.1]" }, true, ""},
		{"relative CA", func(f *mailboxFile) { f.TLSCA = "ca.pem" }, true, `m.tls_ca: "ca.pem" is not a clean absolute path`},
		{"unclean CA", func(f *mailboxFile) { f.TLSCA = "/etc/../ca.pem" }, true, `m.tls_ca: "/etc/../ca.pem" is not a clean absolute path`},
	} {
		f := ok
		tc.edit(&f)
		err := f.checkSending("m", tc.withUser)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", tc.name, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
