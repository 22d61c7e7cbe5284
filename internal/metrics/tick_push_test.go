package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/redact"
)

// pushgateway is a Pushgateway-compatible handler: it accepts PUT
// /metrics/job/<job>{/<label>/<value>} with a metrics body, answers 200 like
// the real one, and keeps each grouping path with the body pushed to it.
type pushgateway struct {
	mu     sync.Mutex
	groups map[string]string
}

func (p *pushgateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, "/metrics/job/") || len(body) == 0 {
		http.Error(w, "want PUT /metrics/job/<job>/... with metrics", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.groups[r.URL.Path] = string(body)
	p.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// Issue 16: pushes are grouped by job and instance, so ticks of one kind
// on two hosts keep two groups instead of overwriting each other; the
// instance defaults to the host name.
func TestExportPushGroupsByJobAndInstance(t *testing.T) {
	t.Parallel()
	gw := &pushgateway{groups: map[string]string{}}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	ctx := context.Background()

	for _, host := range []string{"host-a", "host-b", ""} {
		m := metrics.NewMetrics()
		m.ObserveTick("email", time.Second, true, time.Now())
		if err := m.Export(ctx, nil, metrics.ExportOptions{PushgatewayURL: srv.URL, Job: "rindactl_email", Instance: host}, "email"); err != nil {
			t.Fatalf("push as %q: %v", host, err)
		}
	}
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/metrics/job/rindactl_email/instance/host-a",
		"/metrics/job/rindactl_email/instance/host-b",
		"/metrics/job/rindactl_email/instance/" + hostname,
	} {
		if _, ok := gw.groups[path]; !ok {
			t.Errorf("no push to %s; got %d group(s): %v", path, len(gw.groups), keys(gw.groups))
		}
	}
	if len(gw.groups) != 3 {
		t.Errorf("%d groups, want 3 (one per host): %v", len(gw.groups), keys(gw.groups))
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Issue 25: a Pushgateway URL with credentials (user:password@ and a
// ?token= query, as proxies in front of a Pushgateway want): the push
// reaches the grouping path under the URL's own path with the query kept
// after it, authenticates, and no error text shows either credential in
// any form.
func TestExportPushKeepsTheQueryAndHidesCredentials(t *testing.T) {
	t.Parallel()
	const password, token = "p@ss/w+rd=42", "t0k/en+=99"
	var mu sync.Mutex
	var got []string
	refuse := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" token="+r.URL.Query().Get("token")+" auth="+user+":"+pass)
		deny := refuse
		mu.Unlock()
		if deny {
			// A proxy that echoes what it refused.
			http.Error(w, "denied "+r.URL.String()+" for "+pass, http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	base := strings.Replace(srv.URL, "http://", "http://pusher:"+url.QueryEscape(password)+"@", 1) + "/gw?token=" + url.QueryEscape(token)
	push := func() error {
		m := metrics.NewMetrics()
		m.ObserveTick("email", time.Second, true, time.Now())
		return m.Export(context.Background(), nil, metrics.ExportOptions{PushgatewayURL: base, Job: "rindactl_email", Instance: "h"}, "email")
	}
	if err := push(); err != nil {
		t.Fatal(err)
	}
	want := "PUT /gw/metrics/job/rindactl_email/instance/h token=" + token + " auth=pusher:" + password
	if len(got) != 1 || got[0] != want {
		t.Fatalf("requests %q, want [%q]", got, want)
	}
	mu.Lock()
	refuse = true
	mu.Unlock()
	err := push()
	if err == nil {
		t.Fatal("a refused push returned no error")
	}
	for _, secret := range []string{password, token} {
		if redact.Contains(err.Error(), secret) {
			t.Errorf("the error shows a credential: %v", err)
		}
	}
}
