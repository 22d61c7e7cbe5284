package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// pushgateway is a Pushgateway-compatible handler: it accepts PUT
// /metrics/job/<job>{/<label>/<value>} with a metrics body, answers 200 like
// the real one, and keeps each grouping path with the body pushed to it (a
// PUT replaces its group, as the real one does).
type pushgateway struct {
	mu     sync.Mutex
	groups map[string]string
}

func (p *pushgateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, "/metrics/job/") {
		http.Error(w, "want PUT /metrics/job/<job>/... with metrics", http.StatusBadRequest)
		return
	}
	// Decoded in the format the client declared (protobuf), kept as text.
	var text strings.Builder
	dec := expfmt.NewDecoder(r.Body, expfmt.ResponseFormat(r.Header))
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if _, err := expfmt.MetricFamilyToText(&text, &mf); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	if text.Len() == 0 {
		http.Error(w, "no metrics", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.groups[r.URL.Path] = text.String()
	p.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (p *pushgateway) paths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for k := range p.groups {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Issue 27: three runs from three pods left 4 groups (instance = the pod's
// host name, which cannot be set) and each held the database-wide totals,
// so sum() multiplied them. Pushes are grouped by job; an instance label
// only when asked (--push-instance), and then only for the run's own
// gauges: the database-wide totals stay in the job's group, pushed once.
func TestExportPushGroupsByJobAndTotalsOnce(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	push := func(gw *pushgateway, url, instance string) {
		t.Helper()
		m := metrics.NewMetrics()
		m.AddLeads("enriched", 2)
		m.ObserveTick("enrich", time.Second, 50*time.Second, true, time.Now())
		if err := m.Export(ctx, db.Pool, metrics.ExportOptions{PushgatewayURL: url, Job: "rindactl_enrich", Instance: instance}, "enrich"); err != nil {
			t.Fatalf("push as %q: %v", instance, err)
		}
	}

	gw := &pushgateway{groups: map[string]string{}}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	for range []string{"pod-a", "pod-b", "pod-c"} {
		push(gw, srv.URL, "") // the pods' names are not used
	}
	if got := gw.paths(); !slices.Equal(got, []string{"/metrics/job/rindactl_enrich"}) {
		t.Errorf("groups %v, want only the job's", got)
	}
	if body := gw.groups["/metrics/job/rindactl_enrich"]; !strings.Contains(body, `rindactl_leads_total{outcome="enriched"} 6`) {
		t.Errorf("the job's group lacks the running total 6 of three runs:\n%s", body)
	}

	named := &pushgateway{groups: map[string]string{}}
	srv2 := httptest.NewServer(named)
	t.Cleanup(srv2.Close)
	for _, host := range []string{"host-a", "host-b"} {
		push(named, srv2.URL, host)
	}
	want := []string{"/metrics/job/rindactl_enrich", "/metrics/job/rindactl_enrich/instance/host-a", "/metrics/job/rindactl_enrich/instance/host-b"}
	if got := named.paths(); !slices.Equal(got, want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
	holding := 0
	for path, body := range named.groups {
		if strings.Contains(body, "rindactl_leads_total") {
			holding++
			if !strings.HasSuffix(path, "/job/rindactl_enrich") {
				t.Errorf("%s holds a database-wide total", path)
			}
		}
		if strings.Contains(path, "/instance/") && !strings.Contains(body, `rindactl_tick_last_duration_seconds{kind="enrich"}`) {
			t.Errorf("%s lacks the run's own gauges", path)
		}
	}
	if holding != 1 {
		t.Errorf("%d groups hold rindactl_leads_total, want 1", holding)
	}
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
		m.ObserveTick("email", time.Second, 50*time.Second, true, time.Now())
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
