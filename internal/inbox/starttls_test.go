package inbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
	"github.com/rindactl/rindactl/internal/sequence"
)

// starttlsServer is a raw server offering STARTTLS with a certificate
// valid for 127.0.0.1, and the TLS config that trusts it.
func starttlsServer(t *testing.T, opts imaptest.RawOptions) (sequence.IMAPEndpoint, *tls.Config) {
	t.Helper()
	certSrv := httptest.NewTLSServer(nil)
	t.Cleanup(certSrv.Close)
	opts.Password, opts.TLS = password, &tls.Config{Certificates: certSrv.TLS.Certificates}
	raw := imaptest.NewRaw(t, opts)
	u, err := url.Parse(raw.URL("sdr01@acme.test"))
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(u.Host)
	p, _ := strconv.Atoi(port)
	roots := x509.NewCertPool()
	roots.AddCert(certSrv.Certificate())
	return sequence.IMAPEndpoint{Host: host, Port: p, Username: "sdr01@acme.test", TLS: sequence.TLSRequired}, &tls.Config{RootCAs: roots}
}

// STARTTLS is done by the inbox itself (not the IMAP library), so that
// what arrives over TLS is metered too: a session reads over STARTTLS.
func TestInboxSTARTTLSReads(t *testing.T) {
	t.Parallel()
	msg := junk(1)[0]
	ep, cfg := starttlsServer(t, imaptest.RawOptions{Messages: [][]byte{msg}})
	r, err := dial(context.Background(), ep, credential{secret: password}, cfg, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatalf("STARTTLS session: %v", err)
	}
	defer r.close()
	ranges, err := r.search(0, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.fetch(planRead(ranges, 0, 10).backlog)
	if err != nil || len(msgs) != 1 || string(msgs[0].raw) != string(msg) {
		t.Fatalf("fetch over STARTTLS = %d messages, %v", len(msgs), err)
	}
}

// An endless literal sent over STARTTLS is dropped at its cap: the meter
// sits above TLS.
func TestInboxSTARTTLSIsMetered(t *testing.T) {
	t.Parallel()
	ep, cfg := starttlsServer(t, imaptest.RawOptions{Messages: junk(1), Hostile: imaptest.HostileEndlessLiteral})
	r, err := dial(context.Background(), ep, credential{secret: password}, cfg, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatalf("STARTTLS session: %v", err)
	}
	defer r.close()
	_, err = r.fetch([]uint32{1})
	var we *WireError
	if !errors.As(err, &we) || we.What != "a literal" {
		t.Fatalf("endless literal over TLS: %v, want a literal over its cap", err)
	}
}
