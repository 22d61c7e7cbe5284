package sequence

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

func testCampaign(t *testing.T, unsubscribe string) *Campaign {
	t.Helper()
	doc := `
workspace: acme
name: q4
mailboxes:
  - address: sdr01@acme.test
    name: Dana
    smtp_url: smtp://127.0.0.1:25
steps:
  - subject: "Quick question, {{.FirstName}} at {{.Company}}"
    body: "Hi {{.FirstName}},\nhow is {{.Company}}?"
  - delay: 72h
    body: "Following up, {{.FirstName}}."
`
	if unsubscribe != "" {
		doc += "unsubscribe_url: " + unsubscribe + "\n"
	}
	c, err := ParseCampaign(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testMailbox(t *testing.T, srv *smtptest.Server, address, user, passwordEnv string) Mailbox {
	t.Helper()
	ep, err := ParseSMTPURL(srv.URL(user))
	if err != nil {
		t.Fatal(err)
	}
	return Mailbox{Address: address, SMTP: ep, PasswordEnv: passwordEnv}
}

func TestMailerThreadsFollowUps(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{})
	c := testCampaign(t, "https://acme.test/u?e={{.Email}}")
	mb := testMailbox(t, srv, "sdr01@acme.test", "", "")
	mb.Name = "Dana"
	m := NewMailer(MailerOptions{})
	defer m.Close()
	lead := Lead{FirstName: "Ana", Company: "Globex", Email: "ana+x@globex.test"}

	var thread []string
	for step := range 3 {
		if step == 2 {
			step = 1 // a third message re-uses the follow-up body
		}
		id := NewMessageID(mb.Address)
		msg, err := c.Compose(step, lead, mb, id, thread)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Send(context.Background(), mb, msg); err != nil {
			t.Fatalf("send step %d: %v", step, err)
		}
		thread = append(thread, id)
	}

	got := srv.Messages()
	if len(got) != 3 {
		t.Fatalf("server got %d messages, want 3", len(got))
	}
	if n := srv.Connections(); n != 1 {
		t.Errorf("%d connections for one mailbox, want 1 reused", n)
	}
	first, second, third := got[0].Header, got[1].Header, got[2].Header
	if s := first.Get("Subject"); s != "Quick question, Ana at Globex" {
		t.Errorf("subject = %q", s)
	}
	if first.Get("Message-Id") != "<"+thread[0]+">" || first.Get("In-Reply-To") != "" {
		t.Errorf("first: Message-ID %q In-Reply-To %q", first.Get("Message-Id"), first.Get("In-Reply-To"))
	}
	if s := second.Get("Subject"); s != "Re: Quick question, Ana at Globex" {
		t.Errorf("follow-up subject = %q", s)
	}
	if second.Get("In-Reply-To") != "<"+thread[0]+">" || second.Get("References") != "<"+thread[0]+">" {
		t.Errorf("second: In-Reply-To %q References %q", second.Get("In-Reply-To"), second.Get("References"))
	}
	if want := "<" + thread[0] + "> <" + thread[1] + ">"; third.Get("References") != want || third.Get("In-Reply-To") != "<"+thread[1]+">" {
		t.Errorf("third: References %q want %q, In-Reply-To %q", third.Get("References"), want, third.Get("In-Reply-To"))
	}
	if u := first.Get("List-Unsubscribe"); u != "<https://acme.test/u?e=ana%2Bx%40globex.test>" {
		t.Errorf("List-Unsubscribe = %q", u)
	}
	if p := first.Get("List-Unsubscribe-Post"); p != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post = %q", p)
	}
	if f := first.Get("From"); !strings.Contains(f, "Dana") || !strings.Contains(f, "<sdr01@acme.test>") {
		t.Errorf("From = %q", f)
	}
	if got[0].From != "sdr01@acme.test" || len(got[0].To) != 1 || got[0].To[0] != "ana+x@globex.test" {
		t.Errorf("envelope = %s -> %v", got[0].From, got[0].To)
	}
}

func TestMailerNoUnsubscribeHeadersWithoutURL(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{})
	c := testCampaign(t, "")
	mb := testMailbox(t, srv, "sdr01@acme.test", "", "")
	m := NewMailer(MailerOptions{})
	defer m.Close()
	msg, err := c.Compose(0, Lead{FirstName: "A", Email: "a@b.test"}, mb, NewMessageID(mb.Address), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), mb, msg); err != nil {
		t.Fatal(err)
	}
	if h := srv.Messages()[0].Header; h.Get("List-Unsubscribe") != "" || h.Get("List-Unsubscribe-Post") != "" {
		t.Errorf("unsubscribe headers without a URL: %v", h)
	}
}

func TestMailerHeaderInjection(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{})
	c := testCampaign(t, "")
	mb := testMailbox(t, srv, "sdr01@acme.test", "", "")
	m := NewMailer(MailerOptions{})
	defer m.Close()
	lead := Lead{
		FirstName: "Bob\r\nBcc: victim@evil.test",
		Company:   "Acme\nX-Injected: yes\r\n\r\nbody",
		Email:     "bob@globex.test",
	}
	msg, err := c.Compose(0, lead, mb, NewMessageID(mb.Address), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), mb, msg); err != nil {
		t.Fatal(err)
	}
	got := srv.Messages()
	if len(got) != 1 || len(got[0].To) != 1 || got[0].To[0] != "bob@globex.test" {
		t.Fatalf("envelope recipients = %v", got)
	}
	h := got[0].Header
	if h.Get("Bcc") != "" || h.Get("X-Injected") != "" {
		t.Errorf("injected header reached the server: Bcc=%q X-Injected=%q", h.Get("Bcc"), h.Get("X-Injected"))
	}
	if s := h.Get("Subject"); s != "Quick question, Bob Bcc: victim@evil.test at Acme X-Injected: yes body" {
		t.Errorf("subject = %q", s)
	}
	head, _, _ := strings.Cut(string(got[0].Data), "\r\n\r\n")
	for _, line := range strings.Split(head, "\r\n") {
		if strings.HasPrefix(line, "Bcc:") || strings.HasPrefix(line, "X-Injected:") {
			t.Errorf("raw header line %q", line)
		}
	}

	// A recipient address carrying a header is refused before SMTP.
	msg.To = "bob@globex.test\r\nBcc: victim@evil.test"
	err = m.Send(context.Background(), mb, msg)
	if de := ClassifyDelivery(err); de == nil || de.Kind != DeliveryRejected {
		t.Errorf("injected recipient: err = %v", err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Errorf("server got %d messages, want 1", n)
	}
}

func TestMailerConnectionPerMailbox(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{})
	c := testCampaign(t, "")
	a := testMailbox(t, srv, "a@acme.test", "", "")
	b := testMailbox(t, srv, "b@acme.test", "", "")
	m := NewMailer(MailerOptions{})
	for i := range 10 {
		mb := a
		if i%2 == 1 {
			mb = b
		}
		msg, err := c.Compose(0, Lead{FirstName: "L", Email: "l@x.test"}, mb, NewMessageID(mb.Address), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Send(context.Background(), mb, msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if srv.Accepted() != 10 || srv.Connections() != 2 {
		t.Errorf("accepted %d over %d connections, want 10 over 2", srv.Accepted(), srv.Connections())
	}
}

func TestMailerAuth(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "s3cret-pass"}})
	c := testCampaign(t, "")
	env := map[string]string{"GOOD": "s3cret-pass", "BAD": "wrong-s3cret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	m := NewMailer(MailerOptions{LookupEnv: lookup})
	defer m.Close()
	send := func(mb Mailbox) error {
		msg, err := c.Compose(0, Lead{FirstName: "L", Email: "l@x.test"}, mb, NewMessageID(mb.Address), nil)
		if err != nil {
			t.Fatal(err)
		}
		return m.Send(context.Background(), mb, msg)
	}

	if err := send(testMailbox(t, srv, "sdr01@acme.test", "sdr01", "GOOD")); err != nil {
		t.Fatalf("good credentials: %v", err)
	}
	if got := srv.Messages(); len(got) != 1 || got[0].Username != "sdr01" {
		t.Fatalf("messages = %+v", got)
	}
	for name, mb := range map[string]Mailbox{
		"wrong password": testMailbox(t, srv, "sdr02@acme.test", "sdr01", "BAD"),
		"unset env":      testMailbox(t, srv, "sdr03@acme.test", "sdr01", "UNSET"),
	} {
		err := send(mb)
		var de *DeliveryError
		if !errors.As(err, &de) || de.Kind != DeliveryMailboxAuthFailed {
			t.Errorf("%s: err = %v, want %s", name, err, DeliveryMailboxAuthFailed)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error leaks the password: %v", name, err)
		}
	}
}

func TestMailerRequiredTLSNeverSendsPassword(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "s3cret"}})
	c := testCampaign(t, "")
	ep, err := ParseSMTPURL(srv.URL("sdr01") + "?tls=required")
	if err != nil {
		t.Fatal(err)
	}
	mb := Mailbox{Address: "sdr01@acme.test", SMTP: ep, PasswordEnv: "P"}
	m := NewMailer(MailerOptions{LookupEnv: func(string) (string, bool) { return "s3cret", true }})
	defer m.Close()
	msg, err := c.Compose(0, Lead{FirstName: "L", Email: "l@x.test"}, mb, NewMessageID(mb.Address), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The test server offers no STARTTLS: the connection must stop before AUTH.
	if err := m.Send(context.Background(), mb, msg); err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("err = %v, want a STARTTLS refusal", err)
	}
	if srv.Accepted() != 0 || srv.Attempts(mb.Address) != 0 {
		t.Errorf("server accepted %d, attempts %d; want none", srv.Accepted(), srv.Attempts(mb.Address))
	}
}

func TestMailerRecoversFromDroppedConnection(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{})
	srv.Script(smtptest.Rule{Stage: smtptest.StageData, To: "first@x.test", Close: true, Times: 1})
	c := testCampaign(t, "")
	mb := testMailbox(t, srv, "sdr01@acme.test", "", "")
	m := NewMailer(MailerOptions{Timeout: 5 * time.Second})
	defer m.Close()
	send := func(to string) error {
		msg, err := c.Compose(0, Lead{FirstName: "L", Email: to}, mb, NewMessageID(mb.Address), nil)
		if err != nil {
			t.Fatal(err)
		}
		return m.Send(context.Background(), mb, msg)
	}
	// The whole small message and its final dot were already written when
	// the server hung up: the client cannot tell it was not accepted.
	err := send("first@x.test")
	if de := ClassifyDelivery(err); de == nil || de.Kind != DeliveryUnknown {
		t.Fatalf("close mid-DATA: err = %v, want delivery_unknown", err)
	}
	if err := send("second@x.test"); err != nil {
		t.Fatalf("send after drop: %v", err)
	}
	if srv.Accepted() != 1 || srv.Connections() != 2 {
		t.Errorf("accepted %d over %d connections, want 1 over 2", srv.Accepted(), srv.Connections())
	}
}

// Cold email must not carry a library fingerprint.
func TestMailerSendsNoUserAgentOrXMailer(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{})
	if err := sendOne(t, srv, ""); err != nil {
		t.Fatal(err)
	}
	got := srv.Messages()
	if len(got) != 1 {
		t.Fatalf("server got %d messages", len(got))
	}
	head, _, _ := strings.Cut(string(got[0].Data), "\r\n\r\n")
	for _, line := range strings.Split(head, "\r\n") {
		name, _, _ := strings.Cut(line, ":")
		if strings.EqualFold(name, "User-Agent") || strings.EqualFold(name, "X-Mailer") {
			t.Errorf("header %q reached the server", line)
		}
	}
	if strings.Contains(strings.ToLower(string(got[0].Data)), "go-mail") {
		t.Error("the message names go-mail")
	}
}

// smtps:// speaks TLS from the first byte under the phase deadlines, and
// AUTH PLAIN goes over it.
func TestMailerImplicitTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(nil) // only for its certificate
	srv.StartTLS()
	cert := srv.TLS.Certificates[0]
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	srv.Close()
	raw := smtptest.NewRaw(t, smtptest.RawOptions{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	ep, err := ParseSMTPURL(strings.Replace(raw.URL(), "smtps://", "smtps://sdr01@", 1))
	if err != nil {
		t.Fatal(err)
	}
	mb := Mailbox{Address: "sdr01@acme.test", SMTP: ep, PasswordEnv: "P"}
	m := NewMailer(MailerOptions{TLSConfig: &tls.Config{RootCAs: pool}, LookupEnv: func(string) (string, bool) { return "pw", true }})
	defer m.Close()
	msg, err := testCampaign(t, "").Compose(0, Lead{FirstName: "L", Email: "l@x.test"}, mb, NewMessageID(mb.Address), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), mb, msg); err != nil {
		t.Fatalf("send over smtps: %v", err)
	}
	if raw.Accepted() != 1 || raw.Auths() != 1 {
		t.Errorf("server accepted %d after %d AUTH, want 1 after 1", raw.Accepted(), raw.Auths())
	}
}
