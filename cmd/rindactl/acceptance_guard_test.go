package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
)

// Issue 4: two workspaces with separate budgets in one tick. Workspace
// "spent" reaches its monthly ceiling after a couple of billed calls; its
// other leads wait (pending, not failed) while "fresh" enriches every lead
// in that same tick.
func TestAcceptanceExhaustedWorkspaceDoesNotStallTheOther(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	db, set, env, tickEnv := a.db, a.set, a.env, a.tickEnv

	const n = 30
	importAcceptanceLeads(t, env, "spent", "spent", n)
	fresh := importAcceptanceLeads(t, env, "fresh", "fresh", n)
	// Findymail bills 0.049 and Hunter 0.0245 per found address: a few
	// fit under 0.10.
	const ceiling = 0.10
	if res := runCLI(t, env, "workspace", "set", "spent", "--monthly-usd-ceiling", "0.10"); res.code != exitOK {
		t.Fatalf("workspace set: %+v", res)
	}

	runEnrichTick(t, tickEnv, "--concurrency", "10")

	misses := expectedMisses(fresh)
	if got := leadStatusCounts(t, db, "fresh"); got["enriched"] != n-misses || got["not_found"] != misses {
		t.Errorf("fresh workspace %v, want enriched=%d not_found=%d in the same tick", got, n-misses, misses)
	}
	spent := leadStatusCounts(t, db, "spent")
	// A lead Findymail missed before Hunter hit the ceiling is parked
	// unreachable (by design: see enrich's decide); the rest wait in pending.
	if spent["enriched"] == 0 || spent["enriched"] > 4 || spent["pending"] < n/2 || spent["enrichment_failed"] != 0 {
		t.Errorf("spent workspace %v, want 1-4 enriched (0.10/0.0245), none failed, most waiting in pending", spent)
	}
	calledFor := func(prefix string) int {
		k := 0
		for _, srv := range []*providertest.Server{set.Findymail, set.Hunter} {
			for _, r := range srv.Requests() {
				if strings.HasPrefix(r.LastName, prefix) {
					k++
				}
			}
		}
		return k
	}
	// Misses are refunded, so the ceiling admits a few calls beyond the
	// billed ones, but never the workspace's whole backlog.
	if c := calledFor("spent"); c == 0 || c >= n {
		t.Errorf("providers got %d calls for the exhausted workspace, want some but fewer than %d", c, n)
	}

	res := runCLI(t, env, "workspace", "list", "--output", "json")
	var wl struct {
		Workspaces []struct {
			Name  string  `json:"name"`
			Spent float64 `json:"month_spent_usd"`
		} `json:"workspaces"`
	}
	if res.code != exitOK || json.Unmarshal([]byte(res.stdout), &wl) != nil {
		t.Fatalf("workspace list: %+v", res)
	}
	for _, w := range wl.Workspaces {
		if w.Name == "spent" && (w.Spent > ceiling || w.Spent == 0) {
			t.Errorf("spent workspace's month spend %.4f, want above 0 and at most %.2f", w.Spent, ceiling)
		}
	}
	var ceilingEvents int
	if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM events WHERE kind = 'ceiling_reached'").Scan(&ceilingEvents); err != nil || ceilingEvents != 1 {
		t.Errorf("%d ceiling_reached events (%v), want 1", ceilingEvents, err)
	}
}

// slackHook is an httptest Slack incoming webhook that keeps each post's
// event kind (from the Block Kit context line) and answers "ok".
type slackHook struct {
	*httptest.Server
	mu    sync.Mutex
	kinds []string
}

func newSlackHook(t *testing.T) *slackHook {
	h := &slackHook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Text   string `json:"text"`
			Blocks []struct {
				Type     string `json:"type"`
				Elements []struct {
					Text string `json:"text"`
				} `json:"elements"`
			} `json:"blocks"`
		}
		kind := "unparsable"
		if json.Unmarshal(body, &msg) == nil && msg.Text != "" {
			for _, b := range msg.Blocks {
				if b.Type == "context" && len(b.Elements) > 0 {
					kind, _, _ = strings.Cut(strings.Trim(b.Elements[0].Text, "`"), "`")
				}
			}
		}
		h.mu.Lock()
		h.kinds = append(h.kinds, kind)
		h.mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *slackHook) count(kind string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, k := range h.kinds {
		if k == kind {
			n++
		}
	}
	return n
}

// Issue 4: Findymail out of quota and Hunter healthy across three ticks,
// each with fresh leads: Findymail gets one call, nothing fails, the Slack
// webhook gets exactly one quota_exhausted message, and --metrics-file
// leaves a valid textfile with the last success timestamp.
func TestAcceptanceQuotaAlertOnceAcrossTicks(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	db, set, env, tickEnv := a.db, a.set, a.env, a.tickEnv
	hook := newSlackHook(t)
	tickEnv["RINDA_SLACK_WEBHOOK_URL"] = hook.URL + "/services/T000/B000/s3cret"
	set.Findymail.SetMode(providertest.ModeQuota429)
	metrics := filepath.Join(t.TempDir(), "rindactl_enrich.prom")

	var all []acceptanceLead
	for i, prefix := range []string{"first", "second", "third"} {
		leads := importAcceptanceLeads(t, env, "acme", prefix, 20)
		all = append(all, leads...)
		res := runCLI(t, tickEnv, "enrich", "tick", "--concurrency", "10", "--metrics-file", metrics)
		if res.code != exitOK || strings.Contains(res.stdout+res.stderr, "s3cret") {
			t.Fatalf("tick %d: exit %d (or the webhook URL was printed)\n%s%s", i+1, res.code, res.stdout, res.stderr)
		}
	}

	if c := set.Findymail.Count(); c != 1 {
		t.Errorf("findymail got %d calls across three ticks, want 1", c)
	}
	// Hunter's misses were not tried at Findymail, so they wait as
	// unreachable (negative cache) rather than end not_found.
	if got := leadStatusCounts(t, db, ""); got["enriched"] != len(all)-expectedMisses(all) || got["unreachable"] != expectedMisses(all) || len(got) != 2 {
		t.Errorf("leads %v, want enriched=%d through Hunter and its %d misses unreachable, nothing failed",
			got, len(all)-expectedMisses(all), expectedMisses(all))
	}
	if q := hook.count("quota_exhausted"); q != 1 {
		t.Errorf("webhook got %d quota_exhausted messages (all: %v), want exactly 1", q, hook.kinds)
	}

	families := readMetricsFile(t, metrics)
	last := families["rindactl_tick_last_success_timestamp_seconds"]
	if last == nil || len(last.GetMetric()) == 0 || last.GetMetric()[0].GetGauge().GetValue() <= 0 {
		t.Fatalf("metrics file lacks a last success timestamp: %v", last)
	}
	if matches, _ := filepath.Glob(filepath.Join(filepath.Dir(metrics), "*")); len(matches) != 1 {
		t.Errorf("the metrics directory holds %v, want only the textfile (no temp files left)", matches)
	}
}

// Issue 14: a host without provider keys next to a configured one. Before,
// the keyless host opened 15-minute auth breakers in the shared database
// for every workspace it claimed, blocking the configured host, and Slack
// said the key was rejected though no request was made. Now a missing key
// is the host's own configuration error: a host with no key at all exits 2
// without claiming, one with some keys skips the others and says so once,
// and neither writes a breaker or an event.
func TestAcceptanceKeylessHostBesideKeyedHost(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	db, set, env, tickEnv := a.db, a.set, a.env, a.tickEnv
	const n = 30
	keyed := importAcceptanceLeads(t, env, "keyed", "keyed", n)
	importAcceptanceLeads(t, env, "partial", "partial", n)

	keyless := maps.Clone(tickEnv)
	delete(keyless, "RINDA_FINDYMAIL_API_KEY")
	delete(keyless, "RINDA_HUNTER_API_KEY")
	res := runCLI(t, keyless, "enrich", "tick")
	if res.code != exitUsage || lines(res.stderr) != 1 ||
		!strings.Contains(res.stderr, "RINDA_FINDYMAIL_API_KEY is not set") || !strings.Contains(res.stderr, "RINDA_HUNTER_API_KEY is not set") {
		t.Fatalf("keyless host: exit %d stderr %q; want 2 and one line naming both keys", res.code, res.stderr)
	}
	if res := runCLI(t, keyless, "doctor"); !strings.Contains(res.stdout, "no key (RINDA_HUNTER_API_KEY unset): enrich ticks on this host skip it") {
		t.Errorf("doctor on the keyless host does not report the missing key:\n%s%s", res.stdout, res.stderr)
	}

	// Only Hunter's key: Findymail is skipped, said once, never called.
	hunterOnly := maps.Clone(tickEnv)
	delete(hunterOnly, "RINDA_FINDYMAIL_API_KEY")
	res = runCLI(t, hunterOnly, "enrich", "tick", "--workspace", "partial", "--output", "json")
	if res.code != exitOK || strings.Count(res.stderr, "RINDA_FINDYMAIL_API_KEY is not set") != 1 {
		t.Fatalf("host with Hunter's key only: exit %d; want 0 and the missing Findymail key said once:\n%s", res.code, res.stderr)
	}
	if c := set.Findymail.Count(); c != 0 {
		t.Fatalf("findymail got %d requests from hosts without its key", c)
	}
	// A keyless verifier cannot be skipped: no address could be accepted.
	noVerifier := maps.Clone(tickEnv)
	delete(noVerifier, "RINDA_MILLIONVERIFIER_API_KEY")
	if res := runCLI(t, noVerifier, "enrich", "tick", "--verify", "millionverifier"); res.code != exitUsage || !strings.Contains(res.stderr, "RINDA_MILLIONVERIFIER_API_KEY is not set") {
		t.Fatalf("keyless verifier: exit %d stderr %q; want 2 naming its key", res.code, res.stderr)
	}

	// The configured host works the other workspace at full pace: every
	// lead settled in one tick, each found by Findymail first.
	rep := runEnrichTick(t, tickEnv, "--workspace", "keyed")
	misses := expectedMisses(keyed)
	if rep.Claimed != n || rep.Outcomes["enriched"] != n-misses || rep.Outcomes["not_found"] != misses || rep.Calls["findymail"] != n {
		t.Errorf("configured host: %+v; want all %d settled in one tick with %d Findymail calls", rep, n, n)
	}
	var breakers, events int
	if err := db.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM breakers), (SELECT count(*) FROM events)`).Scan(&breakers, &events); err != nil {
		t.Fatal(err)
	}
	if breakers != 0 || events != 0 {
		t.Errorf("%d breakers and %d events in the shared database; a missing key must write none", breakers, events)
	}
}
