package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/redact/redacttest"
)

// Issue 37, finding 5: a Pushgateway (or the proxy before it) that
// refuses the push and repeats the password in its answer, spelled with
// %20, every byte percent-encoded, as HTML references or JSON \uXXXX, had
// the password logged by the tick (it logs the push's error). Neither the
// error nor the log line written through redact.Handler, as the command
// writes it, carries it in any encoding.
func TestPushErrorEchoingThePasswordLeavesItNowhere(t *testing.T) {
	t.Parallel()
	const password = "push pa/ss+w&rd<7>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pass, _ := r.BasicAuth()
		if pass != password {
			t.Errorf("the push authenticated with %q, want %q", pass, password)
		}
		sp := redacttest.Spellings("pusher", pass)
		var echo []string
		for _, name := range slices.Sorted(maps.Keys(sp)) {
			echo = append(echo, sp[name])
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("<html><body>denied " + strings.Join(echo, "<br>") + "</body></html>"))
	}))
	t.Cleanup(srv.Close)
	base := strings.Replace(srv.URL, "http://", "http://pusher:"+url.PathEscape(password)+"@", 1) + "/gw"
	m := metrics.NewMetrics()
	m.ObserveTick("email", time.Second, 50*time.Second, true, time.Now())
	err := m.Export(context.Background(), nil, metrics.ExportOptions{PushgatewayURL: base, Job: "rindactl_email"}, "email")
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a refused push returned %v, want the 401", err)
	}
	var logs bytes.Buffer
	slog.New(redact.Handler(slog.NewJSONHandler(&logs, nil))).Warn("exporting metrics failed", "error", err.Error())
	for what, text := range map[string]string{"the error": err.Error(), "the log line": logs.String()} {
		if enc := redacttest.Leaks(text, password[:10]); enc != "" {
			t.Errorf("the password (or its first part) appears in %s, spelled %s: %s", what, enc, text)
		}
	}
	if errors.Unwrap(err) != nil && redacttest.Leaks(errors.Unwrap(err).Error(), password) != "" {
		t.Errorf("the error wraps one that carries the password")
	}
}
