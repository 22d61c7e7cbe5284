package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/metrics"
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
