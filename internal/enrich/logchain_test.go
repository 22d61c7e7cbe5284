package enrich_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
	"github.com/rindactl/rindactl/internal/lead"
)

// The memo's rule, both sides of its edge: a 429 whose Retry-After is under
// 10 minutes is transient, otherwise it is the quota.
func TestRetryAfterTenMinuteEdge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retryAfter time.Duration
		kind       enrich.ErrorKind
	}{
		{9*time.Minute + 59*time.Second, enrich.KindRateLimited},
		{10 * time.Minute, enrich.KindQuota},
		{10*time.Minute + time.Second, enrich.KindQuota},
	} {
		if got := enrich.RateLimited("findymail", 429, tc.retryAfter, "").Kind; got != tc.kind {
			t.Errorf("Retry-After %s: %s, want %s", tc.retryAfter, got, tc.kind)
		}
	}
}

// The memo's three-stage log chain through a real tick: for a failed call,
// the adapter's line, the waterfall's line and the tick's outcome line, each
// with every field, at warn, joined by lead_id and workspace_id. Findymail
// answers 429 with Retry-After 9m59s (transient: the lead retries later) or
// 10m01s (the quota: the lead waits in the negative cache).
func TestLogChainAdapterWaterfallTick(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retryAfter string
		kind       enrich.ErrorKind
		transient  bool
		status     lead.Status
		waterfall  string
		adapter    string
	}{
		{"599", enrich.KindRateLimited, true, lead.Pending, "provider call failed transiently", "provider answered: throttled"},
		{"601", enrich.KindQuota, false, lead.Unreachable, "provider quota exhausted; no more calls to it for this workspace in this tick", "provider answered: quota exhausted"},
	} {
		t.Run(tc.retryAfter, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ids := e.seed(t, "acme", 1)
			e.set.Findymail.RateLimit(tc.retryAfter)
			log := slog.New(slog.NewJSONHandler(e.log, nil))
			f, err := provider.NewFinder("findymail", e.set.Getenv, provider.WithLogger(log))
			if err != nil {
				t.Fatal(err)
			}
			rep := e.tick(t, enrich.TickConfig{Finders: []enrich.Finder{f}, Logger: log, TickID: "chain"})
			if rep.Outcomes.Map()[string(tc.status)] != 1 {
				t.Fatalf("outcomes %+v, want the lead %s", rep.Outcomes, tc.status)
			}

			lines := map[string]map[string]any{}
			for _, raw := range strings.Split(strings.TrimSpace(e.log.String()), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(raw), &rec); err != nil {
					t.Fatalf("log line is not JSON: %q", raw)
				}
				if c, ok := rec["component"].(string); ok && rec["level"] == "WARN" {
					lines[c] = rec
				}
			}
			ra := float64(1000 * map[string]int{"599": 599, "601": 601}[tc.retryAfter])
			lead, ws := float64(ids[0]), float64(1)
			want := map[string]map[string]any{
				"adapter": {"msg": tc.adapter, "provider": "findymail", "endpoint": findymail.SearchPath,
					"status": float64(429), "retry_after_ms": ra, "max_retries": float64(2), "kind": string(tc.kind),
					"is_transient": tc.transient, "lead_id": lead, "workspace_id": ws},
				"waterfall": {"msg": tc.waterfall, "provider": "findymail", "kind": string(tc.kind), "retry_after_ms": ra,
					"is_transient": tc.transient, "lead_id": lead, "workspace_id": ws, "tick_id": "chain"},
				"tick": {"msg": "lead outcome after a provider failure", "provider": "findymail", "status": string(tc.status),
					"is_transient": tc.transient, "lead_id": lead, "workspace_id": ws, "tick_id": "chain", "attempts": float64(1)},
			}
			for stage, fields := range want {
				got := lines[stage]
				if got == nil {
					t.Fatalf("no %s line at warn in:\n%s", stage, e.log.String())
				}
				for k, v := range fields {
					if got[k] != v {
						t.Errorf("%s line: %s = %v, want %v", stage, k, got[k], v)
					}
				}
				if _, ok := got["duration_ms"].(float64); !ok {
					t.Errorf("%s line lacks duration_ms", stage)
				}
				if msg, _ := got["error"].(string); !strings.Contains(msg, string(tc.kind)) {
					t.Errorf("%s line's error %q does not name %s", stage, got["error"], tc.kind)
				}
			}
			// The outcome line says when the lead is due again: after the
			// provider's wait at least.
			if due := lines["tick"]["retry_after_ms"].(float64); due < ra-1000 {
				t.Errorf("tick line: retry_after_ms %v, want at least the provider's %v", due, ra)
			}
		})
	}
}
