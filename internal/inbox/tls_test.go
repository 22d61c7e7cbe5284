package inbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
)

// TestInboxTickVerifiesTLS reads an imaps:// INBOX whose certificate the
// tick trusts, and refuses the same server when it does not: TLS is
// verified by default.
func TestInboxTickVerifiesTLS(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	// httptest's certificate is valid for 127.0.0.1.
	certSrv := httptest.NewTLSServer(nil)
	t.Cleanup(certSrv.Close)
	secure := imaptest.New(t, &tls.Config{Certificates: certSrv.TLS.Certificates})
	if err := secure.AddAccount("sdr01@acme.test", password); err != nil {
		t.Fatal(err)
	}
	f.exec(`UPDATE mailboxes SET imap_url = $1 WHERE address = 'sdr01@acme.test'`, secure.URL("sdr01@acme.test"))
	f.exec(`UPDATE mailboxes SET imap_url = NULL WHERE address <> 'sdr01@acme.test'`)
	f.imap = secure
	n := 1
	for ; n <= 5; n++ {
		if _, mb := f.sent(n); mb == "sdr01@acme.test" {
			break
		}
	}
	f.deliver("gmail-reply.eml", n)

	_, err := RunTick(context.Background(), f.tickPool, TickOptions{LookupEnv: func(string) (string, bool) { return password, true }})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted certificate: error %v, want a certificate error", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(certSrv.Certificate())
	rep := f.tick(TickOptions{TLSConfig: &tls.Config{RootCAs: roots}})
	if rep.Outcomes[OutcomeReplied] != 1 || f.status(n) != "replied" {
		t.Fatalf("over TLS = %+v, lead %d %s", rep, n, f.status(n))
	}
}
