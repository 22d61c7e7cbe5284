package main

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
	"github.com/rindactl/rindactl/internal/mailauth/oauthtest"
	"github.com/rindactl/rindactl/internal/redact/redacttest"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// tlsPassword is sdr01's password on both servers of a tlsMailbox.
const tlsPassword = "tls-mailbox-s3cret-pw"

// tlsMailbox is one password mailbox, sdr01@acme.test, on an smtps:// and
// an imaps:// server whose certificate (httptest's, for 127.0.0.1) no
// system root signs, as a company's own mail server with a private CA.
type tlsMailbox struct {
	db         *storetest.DB
	smtp       *smtptest.Server
	smtpURL    string
	imapURL    string
	ca         string // that certificate as a PEM file: the right tls_ca
	notPEM     string // a file with no PEM certificate in it
	unrelated  string // a PEM file of another CA
	absent     string // a path with no file
	campaignAt string
}

func newTLSMailbox(t *testing.T) *tlsMailbox {
	t.Helper()
	certSrv := httptest.NewTLSServer(nil)
	t.Cleanup(certSrv.Close)
	cfg := &tls.Config{Certificates: certSrv.TLS.Certificates}
	m := &tlsMailbox{db: storetest.New(t)}
	m.smtp = smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": tlsPassword}, TLS: cfg})
	imap := imaptest.New(t, cfg)
	if err := imap.AddAccount("sdr01@acme.test", tlsPassword); err != nil {
		t.Fatal(err)
	}
	m.smtpURL, m.imapURL = m.smtp.URL("sdr01"), imap.URL("sdr01@acme.test")
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	m.ca = write("ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certSrv.Certificate().Raw}))
	m.notPEM = write("ca.der", certSrv.Certificate().Raw)
	m.unrelated = write("other-ca.pem", testkit.UnrelatedCAPEM(t))
	m.absent = filepath.Join(dir, "absent.pem")
	m.campaignAt = filepath.Join(dir, "campaign.yaml")
	return m
}

// importWith (re)imports the campaign with tlsCA as sdr01's tls_ca ("":
// none, the system roots alone).
func (m *tlsMailbox) importWith(t *testing.T, tlsCA string) {
	t.Helper()
	caLine := ""
	if tlsCA != "" {
		caLine = "    tls_ca: " + tlsCA + "\n"
	}
	doc := fmt.Sprintf(`workspace: acme
name: q4
mailboxes:
  - address: sdr01@acme.test
    smtp_url: %s
    imap_url: %s
    password_env: RINDA_SMTP_PASSWORD_SDR01
%ssteps:
  - subject: "Hi {{.FirstName}}"
    body: "Hello"
`, m.smtpURL, m.imapURL, caLine)
	if err := os.WriteFile(m.campaignAt, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, map[string]string{"DATABASE_URL": m.db.URL}, "import", "campaign", m.campaignAt); res.code != 0 {
		t.Fatalf("import campaign with tls_ca %q = %+v", tlsCA, res)
	}
}

// lineWith is the first line of s holding prefix, "" when none does.
func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, prefix) {
			return l
		}
	}
	return ""
}

// Issue 38: `mailbox test` names a TLS failure per protocol: an IMAP
// certificate failure was labelled "smtp mailbox_refused"; it now says
// imap, TLS and the server certificate's subject and issuer. A missing,
// non-PEM or wrong tls_ca is named with its file; the right one logs in.
func TestMailboxTestNamesTheCertificateAndTheTLSCA(t *testing.T) {
	t.Parallel()
	m := newTLSMailbox(t)
	env := map[string]string{"DATABASE_URL": m.db.URL, "RINDA_SMTP_PASSWORD_SDR01": tlsPassword}
	const untrusted = `server certificate subject "O=Acme Co", issuer "O=Acme Co"`
	for _, tc := range []struct {
		name, tlsCA string
		want        []string // on both the smtp and the imap line
	}{
		{name: "no tls_ca: a certificate no system root signs", want: []string{"certificate signed by unknown authority", untrusted}},
		{name: "the tls_ca of the server's CA", tlsCA: m.ca},
		{name: "a tls_ca file that does not exist", tlsCA: m.absent, want: []string{"tls_ca " + m.absent + ": no such file or directory"}},
		{name: "a tls_ca file that is not PEM", tlsCA: m.notPEM, want: []string{"tls_ca " + m.notPEM + ": no PEM certificate in the file"}},
		{name: "a tls_ca of another CA", tlsCA: m.unrelated, want: []string{"certificate signed by unknown authority", untrusted}},
	} {
		m.importWith(t, tc.tlsCA)
		res := runCLI(t, env, "mailbox", "test", "sdr01@acme.test")
		if tc.want == nil {
			if res.code != exitOK || lineWith(res.stdout, "smtp ok") == "" || lineWith(res.stdout, "imap ok") == "" {
				t.Errorf("%s: %+v, want both logins ok", tc.name, res)
			}
			continue
		}
		if res.code != exitError || strings.Contains(res.stderr, "mailbox_refused") {
			t.Errorf("%s: %+v, want exit 1 without the tick's smtp label", tc.name, res)
		}
		for _, proto := range []string{"smtp", "imap"} {
			line := lineWith(res.stderr, proto+" failed")
			if !strings.Contains(line, ": TLS: ") {
				t.Errorf("%s: %s line %q, want it failed at TLS\n%s", tc.name, proto, line, res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%s: %s line %q lacks %q", tc.name, proto, line, w)
				}
			}
		}
	}
	if m.smtp.Received() != 0 {
		t.Fatalf("mailbox test sent %d messages, want 0", m.smtp.Received())
	}
}

// A server that answers a wrong login with the password it was sent, in
// every spelling (smtptest.RawOptions.AuthEcho): `mailbox test` names AUTH
// and shows the server's words, with the password in none of its forms.
func TestMailboxTestRedactsTheServersWords(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	raw := smtptest.NewRaw(t, smtptest.RawOptions{AuthEcho: true, Enhanced: true})
	const password = `W0ng pa$$/word+é&"x"`
	doc := fmt.Sprintf("workspace: acme\nname: q4\nmailboxes:\n  - address: sdr01@acme.test\n    smtp_url: %s\n    password_env: RINDA_SMTP_PASSWORD_SDR01\nsteps:\n  - subject: Hi\n    body: Hello\n",
		strings.Replace(raw.URL(), "smtp://", "smtp://sdr01@", 1))
	file := filepath.Join(t.TempDir(), "campaign.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_SMTP_PASSWORD_SDR01": password}
	if res := runCLI(t, env, "import", "campaign", file); res.code != 0 {
		t.Fatalf("import = %+v", res)
	}
	res := runCLI(t, env, "mailbox", "test", "sdr01@acme.test")
	line := lineWith(res.stderr, "smtp failed")
	if res.code != exitError || !strings.Contains(line, ": AUTH: ") || !strings.Contains(line, `535 "5.7.8 Authentication failed for [redacted]`) {
		t.Fatalf("wrong password at an echoing server = %+v, want exit 1 naming AUTH and the server's words", res)
	}
	if enc := redacttest.Leaks(res.stdout+res.stderr, password); enc != "" {
		t.Fatalf("the password is in the output (%s):\n%s", enc, res.stderr)
	}
}

// An oauth2 mailbox logs in with XOAUTH2 over SMTP and IMAP with its
// stored grant; a revoked grant fails at the oauth stage, on both, naming
// `rindactl mailbox authorize`, and no token is printed.
func TestMailboxTestOAuth2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	idp := oauthtest.New(t)
	smtp := smtptest.New(t, smtptest.Options{Bearer: idp.Valid})
	imap := imaptest.New(t, nil)
	imap.SetBearer(idp.Valid)
	keyText := masterKey(t)
	key, err := secrets.ParseMasterKey("test", keyText)
	if err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	doc.WriteString("workspace: acme\nname: q4\nmailboxes:\n")
	for _, mb := range []string{"ann@acme.test", "bob@acme.test"} {
		if err := imap.AddAccount(mb, "unused-"+mb); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&doc, "  - address: %s\n    smtp_url: %s\n    imap_url: %s\n    auth: {method: oauth2, provider: generic, client_id_env: CLIENT_ID, auth_url: %q, token_url: %q, scopes: [mail]}\n",
			mb, smtp.URL(""), imap.URL(mb), idp.AuthURL(), idp.TokenURL())
	}
	doc.WriteString("steps:\n  - subject: Hi\n    body: Hello\n")
	file := filepath.Join(t.TempDir(), "campaign.yaml")
	if err := os.WriteFile(file, []byte(doc.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": db.URL, secrets.KeyEnv: keyText, "CLIENT_ID": idp.ClientID}
	if res := runCLI(t, env, "import", "campaign", file); res.code != 0 {
		t.Fatalf("import = %+v", res)
	}
	refresh := map[string]string{}
	for _, mb := range []string{"ann@acme.test", "bob@acme.test"} {
		var id int64
		if err := db.Pool.QueryRow(ctx, `SELECT id FROM mailboxes WHERE address = $1`, mb).Scan(&id); err != nil {
			t.Fatal(err)
		}
		refresh[mb] = idp.Grant(mb, "mail")
		if err := secrets.StoreMailboxGrant(ctx, db.Pool, key, id, mb, refresh[mb], "", time.Time{}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	idp.Revoke("bob@acme.test")

	res := runCLI(t, env, "mailbox", "test", "ann@acme.test")
	if res.code != exitOK || lineWith(res.stdout, "smtp ok") == "" || lineWith(res.stdout, "imap ok") == "" {
		t.Fatalf("ann over XOAUTH2 = %+v, want both logins ok", res)
	}
	res = runCLI(t, env, "mailbox", "test", "bob@acme.test")
	if res.code != exitError {
		t.Fatalf("bob, revoked = %+v, want exit 1", res)
	}
	for _, proto := range []string{"smtp", "imap"} {
		if line := lineWith(res.stderr, proto+" failed"); !strings.Contains(line, ": oauth: ") || !strings.Contains(line, "rindactl mailbox authorize bob@acme.test") {
			t.Errorf("bob's %s line %q, want the oauth stage naming mailbox authorize\n%s", proto, line, res.stderr)
		}
	}
	for _, rt := range refresh {
		if strings.Contains(res.stdout+res.stderr, rt) {
			t.Errorf("a refresh token was printed:\n%s", res.stderr)
		}
	}
	if smtp.Received() != 0 {
		t.Fatalf("mailbox test sent %d messages, want 0", smtp.Received())
	}
}

// Issue 38: a missing password variable in the env file, a missing,
// non-PEM or wrong tls_ca, a wrong password, or an IMAP certificate no
// root signs gave `doctor` exit 0 while the email tick paused the mailbox
// and the inbox tick exited 1 every firing. `doctor --mailboxes` logs in
// with the env file's environment and exits as the inbox tick does with
// the same environment: 1 for each, 0 for a healthy mailbox.
func TestDoctorMailboxesFailsAsTheTicksWould(t *testing.T) {
	t.Parallel()
	m := newTLSMailbox(t)
	if _, err := m.db.Pool.Exec(context.Background(), healthyTicks); err != nil {
		t.Fatal(err)
	}
	// This shell has the password; the units may not.
	shell := map[string]string{"DATABASE_URL": m.db.URL, "RINDA_SMTP_PASSWORD_SDR01": tlsPassword}
	units := func(password string) map[string]string {
		vars := map[string]string{"DATABASE_URL": m.db.URL, "RINDA_HUNTER_API_KEY": "hk-test"}
		if password != "" {
			vars["RINDA_SMTP_PASSWORD_SDR01"] = password
		}
		return vars
	}
	const untrusted = `server certificate subject "O=Acme Co", issuer "O=Acme Co"`
	for _, tc := range []struct {
		name, tlsCA, password string
		code                  int
		// smtp and imap are what each protocol's problem line says; nil:
		// that login must succeed.
		smtp, imap []string
		// tick is what the inbox tick's error says for the same fault.
		tick []string
	}{
		{name: "healthy", tlsCA: m.ca, password: tlsPassword, code: exitOK},
		{name: "the password variable only in this shell", tlsCA: m.ca, code: exitError,
			smtp: []string{"failed at password", "RINDA_SMTP_PASSWORD_SDR01"}, imap: []string{"failed at password", "RINDA_SMTP_PASSWORD_SDR01"}},
		{name: "a wrong password", tlsCA: m.ca, password: "wrong-" + tlsPassword, code: exitError,
			smtp: []string{"failed at AUTH"}, imap: []string{"failed at AUTH"}},
		{name: "a certificate no root signs", password: tlsPassword, code: exitError,
			smtp: []string{"failed at TLS", untrusted}, imap: []string{"failed at TLS", untrusted}, tick: []string{"imap TLS: ", untrusted}},
		{name: "a tls_ca file that does not exist", tlsCA: m.absent, password: tlsPassword, code: exitError,
			smtp: []string{"failed at TLS", "tls_ca " + m.absent}, imap: []string{"failed at TLS", "tls_ca " + m.absent}, tick: []string{"imap TLS: ", "tls_ca " + m.absent}},
		{name: "a tls_ca file that is not PEM", tlsCA: m.notPEM, password: tlsPassword, code: exitError,
			smtp: []string{"failed at TLS", "no PEM certificate"}, imap: []string{"failed at TLS", "no PEM certificate"}, tick: []string{"imap TLS: ", "no PEM certificate"}},
		{name: "a tls_ca of another CA", tlsCA: m.unrelated, password: tlsPassword, code: exitError,
			smtp: []string{"failed at TLS", untrusted}, imap: []string{"failed at TLS", untrusted}, tick: []string{"imap TLS: ", untrusted}},
	} {
		m.importWith(t, tc.tlsCA)
		vars := units(tc.password)
		// --interval 1h: the tick history stays healthy however slow the
		// machine; only the mailbox decides.
		args := []string{"doctor", "--interval", "1h", "--env-file", envFileOf(t, vars)}
		// Without --mailboxes doctor cannot see it (it exited 0 here).
		if res := runCLI(t, shell, args...); res.code != exitOK {
			t.Errorf("%s: doctor without --mailboxes = %d\n%s", tc.name, res.code, res.stderr)
		}
		res := runCLI(t, shell, append(args, "--mailboxes")...)
		if res.code != tc.code {
			t.Errorf("%s: doctor --mailboxes exit %d, want %d\n%s%s", tc.name, res.code, tc.code, res.stdout, res.stderr)
		}
		tick := runCLI(t, vars, "inbox", "tick")
		if tick.code != tc.code {
			t.Errorf("%s: inbox tick with the env file's environment exit %d, doctor's %d; want them equal\n%s", tc.name, tick.code, tc.code, tick.stderr)
		}
		// The tick names IMAP and the certificate or tls_ca too, never
		// the email tick's "smtp mailbox_refused".
		for _, w := range tc.tick {
			if !strings.Contains(tick.stderr, w) || strings.Contains(tick.stderr, "mailbox_refused") {
				t.Errorf("%s: inbox tick's error lacks %q or says mailbox_refused:\n%s", tc.name, w, tick.stderr)
			}
		}
		for proto, want := range map[string][]string{"smtp": tc.smtp, "imap": tc.imap} {
			prefix := "mailbox sdr01@acme.test: " + proto + " login to 127.0.0.1:"
			if want == nil {
				if lineWith(res.stdout, "ok       "+prefix) == "" {
					t.Errorf("%s: no %s login check on stdout:\n%s", tc.name, proto, res.stdout)
				}
				continue
			}
			line := lineWith(res.stderr, "problem  "+prefix)
			for _, w := range want {
				if !strings.Contains(line, w) {
					t.Errorf("%s: %s problem line %q lacks %q\n%s", tc.name, proto, line, w, res.stderr)
				}
			}
		}
		if strings.Contains(res.stderr, "mailbox_refused") || strings.Contains(res.stdout+res.stderr, tlsPassword) {
			t.Errorf("%s: the tick's smtp label or the password in doctor's output:\n%s", tc.name, res.stderr)
		}
	}
}
