package sequence

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// Issue 27: Postfix with reject_non_fqdn_helo_hostname answered the bare
// host name ("vm", a pod's name) with 504 5.5.2, and both leads were
// failed for good while the mailbox stayed active. The greeting name is
// the mailbox's helo, else RINDA_SMTP_HELO, else the host's FQDN, else an
// address literal: never a bare label.
func TestTickGreetsAServerThatEnforcesFQDN(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		opts     MailerOptions
		mailbox  string // the mailbox's own helo
		wantHELO string // "" : any qualified name
	}{
		{name: "shipped defaults"},
		{name: "no FQDN: an address literal", opts: MailerOptions{FQDN: func() string { return "" }}, wantHELO: "[127.0.0.1]"},
		{name: "the host's FQDN", opts: MailerOptions{FQDN: func() string { return "mx1.acme.test" }}, wantHELO: "mx1.acme.test"},
		{name: "RINDA_SMTP_HELO before the FQDN", opts: MailerOptions{HELO: "out.acme.test", FQDN: func() string { return "mx1.acme.test" }}, wantHELO: "out.acme.test"},
		{name: "the mailbox's helo first", opts: MailerOptions{HELO: "out.acme.test"}, mailbox: "sdr01.mail.acme.test", wantHELO: "sdr01.mail.acme.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOptions{leads: 2, mailboxes: 1})
			raw := smtptest.NewRaw(t, smtptest.RawOptions{RequireFQDN: true, Enhanced: true})
			f.pointMailbox("sdr01@acme.test", raw.URL())
			if tc.mailbox != "" {
				f.exec(`UPDATE mailboxes SET helo = $1`, tc.mailbox)
			}
			if tc.name != "shipped defaults" {
				f.mailer = NewMailer(tc.opts)
				t.Cleanup(func() { _ = f.mailer.Close() })
			}
			rep := f.tick(TickOptions{})
			if rep.Sent != 2 {
				t.Errorf("sent %d, want 2; outcomes %v; the server saw %q", rep.Sent, rep.Outcomes, raw.Helos())
			}
			for _, name := range raw.Helos() {
				if !ValidGreetingName(name) || (tc.wantHELO != "" && name != tc.wantHELO) {
					t.Errorf("greeted as %q, want %q (a qualified name or an address literal)", name, tc.wantHELO)
				}
			}
			if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'failed'`); n != 0 {
				t.Errorf("%d leads failed", n)
			}
		})
	}
}

// Issue 27: a 5xx to EHLO/HELO is the mailbox's problem, not a lead's: the
// mailbox pauses with a mailbox_paused event, its step-1 leads go out from
// a healthy mailbox, and no lead fails. It failed each lead for good.
func TestTickRefusedGreetingPausesMailbox(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 10, mailboxes: 2})
	raw := smtptest.NewRaw(t, smtptest.RawOptions{Replies: map[smtptest.Stage]string{
		smtptest.StageEHLO: "504 5.5.2 <vm>: Helo command rejected: need fully-qualified hostname",
	}})
	f.pointMailbox("sdr01@acme.test", raw.URL())

	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeMailboxPaused] != 1 || rep.Outcomes[OutcomeRejected] != 0 || rep.Outcomes[OutcomeFailed] != 0 {
		t.Fatalf("tick = %+v, want the mailbox paused and no lead rejected", rep)
	}
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status <> 'active' OR attempts > 0`); n != 0 {
		t.Errorf("%d enrollments failed or charged an attempt, want none", n)
	}
	if rep.Sent != 10 {
		t.Errorf("sent %d, want all 10 from the healthy mailbox", rep.Sent)
	}
	if n := f.count(`SELECT count(*) FROM mailboxes WHERE address = 'sdr01@acme.test' AND status = 'active'
		AND paused_until BETWEEN now() + interval '50 minutes' AND now() + interval '70 minutes'`); n != 1 {
		t.Error("the refused mailbox is not paused for an hour")
	}
	var payload []byte
	if err := f.pool.QueryRow(context.Background(), `SELECT payload FROM events WHERE kind = 'mailbox_paused'`).Scan(&payload); err != nil {
		t.Fatalf("no mailbox_paused event: %v", err)
	}
	var ev struct {
		Kind string
		Code int
	}
	if err := json.Unmarshal(payload, &ev); err != nil || ev.Kind != string(DeliveryMailboxRefused) || ev.Code != 504 {
		t.Errorf("event payload %s, want kind mailbox_refused, code 504", payload)
	}
}

// Issue 27: a server certificate this host does not trust paused nothing:
// each tick counted a transient failure against one lead. It pauses the
// mailbox with an event; with the private CA as the mailbox's tls_ca
// (besides the system roots, unlike SSL_CERT_FILE) it sends.
func TestTickUntrustedCertificatePausesMailboxAndTLSCATrustsIt(t *testing.T) {
	t.Parallel()
	// httptest's certificate is valid for 127.0.0.1, signed by no public CA.
	certSrv := httptest.NewTLSServer(nil)
	t.Cleanup(certSrv.Close)
	f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 1})
	raw := smtptest.NewRaw(t, smtptest.RawOptions{TLS: &tls.Config{Certificates: certSrv.TLS.Certificates}})
	f.pointMailbox("sdr01@acme.test", raw.URL())

	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeMailboxPaused] != 1 || rep.Sent != 0 {
		t.Fatalf("tick = %+v, want the mailbox paused", rep)
	}
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status <> 'active' OR attempts > 0`); n != 0 {
		t.Errorf("%d enrollments failed or charged an attempt, want none", n)
	}
	if n := f.count(`SELECT count(*) FROM events WHERE kind = 'mailbox_paused' AND payload->>'kind' = 'mailbox_refused'`); n != 1 {
		t.Errorf("%d mailbox_paused events for the certificate, want 1", n)
	}

	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	f.exec(`UPDATE mailboxes SET tls_ca = $1, paused_until = NULL`, ca)
	f.due()
	if rep := f.tick(TickOptions{}); rep.Sent != 3 {
		t.Fatalf("with tls_ca: tick = %+v, want 3 sent", rep)
	}
	if got := len(raw.Delivered()); got != 3 {
		t.Errorf("the server has %d messages, want 3", got)
	}
}

func TestMailboxTLSCAUnreadableRefusesTheMailbox(t *testing.T) {
	t.Parallel()
	mb := Mailbox{Address: "sdr01@acme.test", TLSCA: filepath.Join(t.TempDir(), "absent.pem")}
	_, err := mb.TLSConfig(nil, "smtp.acme.test")
	var de *DeliveryError
	if !errors.As(err, &de) || de.Kind != DeliveryMailboxRefused || !strings.Contains(err.Error(), "absent.pem") {
		t.Fatalf("missing tls_ca: %v, want mailbox_refused naming the file", err)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mb.TLSCA = notPEM
	if _, err := mb.TLSConfig(nil, "smtp.acme.test"); !errors.As(err, &de) || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("tls_ca without a certificate: %v", err)
	}
}

func TestGreetingNames(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"mail.example.com": true, "mx-1.eu.example.com.": true, "[192.0.2.1]": true, "[IPv6:2001:db8::1]": true,
		"vm": false, "": false, "localhost": false, "localhost.localdomain": false, "192.0.2.1": false,
		"[2001:db8::1]": false, "[IPv6:192.0.2.1]": false, "bad_name.example.com": false, "-x.example.com": false,
	} {
		if got := ValidGreetingName(name); got != want {
			t.Errorf("ValidGreetingName(%q) = %v, want %v", name, got, want)
		}
	}
	for addr, want := range map[string]string{"192.0.2.10:5000": "[192.0.2.10]", "[2001:db8::1]:5000": "[IPv6:2001:db8::1]"} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := addressLiteral(a); got != want {
			t.Errorf("addressLiteral(%s) = %s, want %s", addr, got, want)
		}
	}
	host := func(name string) func() (string, error) { return func() (string, error) { return name, nil } }
	canonical := func(name string, err error) func(context.Context, string) (string, error) {
		return func(context.Context, string) (string, error) { return name, err }
	}
	for _, tc := range []struct {
		hostname, canonical string
		err                 error
		want                string
	}{
		{"vm.acme.test", "", nil, "vm.acme.test"},
		{"vm", "vm.acme.test.", nil, "vm.acme.test"},
		{"vm", "vm", nil, ""},
		{"vm", "", errors.New("no such host"), ""},
		{"rindactl-email-28471-x8k2p", "", errors.New("no such host"), ""},
	} {
		if got := hostFQDN(host(tc.hostname), canonical(tc.canonical, tc.err)); got != tc.want {
			t.Errorf("hostFQDN(%q, %q) = %q, want %q", tc.hostname, tc.canonical, got, tc.want)
		}
	}
}
