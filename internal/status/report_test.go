package status_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func incidentReport(t *testing.T, f status.Filter) *status.Report {
	t.Helper()
	db := storetest.New(t)
	seed(t, db, incidentSQL, fixedNow)
	r, err := status.Build(context.Background(), db.Pool, fixedNow, f)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./internal/status -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestStatusTableGolden(t *testing.T) {
	t.Parallel()
	r := incidentReport(t, status.Filter{})
	for _, tc := range []struct {
		name    string
		overdue bool
	}{{"status_table.golden", false}, {"status_overdue.golden", true}} {
		var out bytes.Buffer
		if err := status.WriteTable(&out, r, status.TableOptions{Overdue: tc.overdue}); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out.Bytes(), []byte("\x1b[")) {
			t.Errorf("%s: escape codes without colour", tc.name)
		}
		golden(t, tc.name, out.Bytes())
	}
}

func TestStatusColorOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	r := incidentReport(t, status.Filter{})
	var out bytes.Buffer
	if err := status.WriteTable(&out, r, status.TableOptions{Color: true, Overdue: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("\x1b[")) {
		t.Errorf("no escape codes with colour on:\n%s", out.String())
	}
}

func TestStatusCounts(t *testing.T) {
	t.Parallel()
	r := incidentReport(t, status.Filter{})
	wantStatus := map[lead.Status]int64{"pending": 20, "in_progress": 1, "enriched": 10, "not_found": 4, "unreachable": 20, "enrichment_failed": 2}
	for s, n := range wantStatus {
		if r.Enrich.ByStatus[s] != n {
			t.Errorf("by_status[%s] = %d, want %d", s, r.Enrich.ByStatus[s], n)
		}
	}
	// acme's 15 waiting leads sit behind the open findymail breaker; beta's 5
	// behind its ceiling; due: acme 10 + beta 5.
	wantBlocked := status.EnrichBlocked{BreakerOpen: 15, NegativeCache: 20, Ceiling: 5, RateLimited: 0}
	if r.Enrich.Blocked != wantBlocked || r.Enrich.DueNow != 15 {
		t.Errorf("enrich due=%d blocked=%+v, want 15 %+v", r.Enrich.DueNow, r.Enrich.Blocked, wantBlocked)
	}
	// q3-outbound at 14:55 Seoul / 01:55 New York: Seoul leads are overdue,
	// New York leads are outside the window; night-shift is outside its own.
	e := r.Email
	wantEmail := status.EmailBlocked{NoEmail: 3, MailboxPaused: 6, OutsideWindow: 17}
	if e.Blocked != wantEmail || e.Overdue != 10 {
		t.Errorf("email overdue=%d blocked=%+v, want 10 %+v", e.Overdue, e.Blocked, wantEmail)
	}
	if e.OldestOverdueSeconds <= 0 {
		t.Errorf("oldest_overdue_seconds = %d", e.OldestOverdueSeconds)
	}
	if len(r.Spend) != 2 || !r.Spend[1].Reached || r.Spend[0].Reached || r.Spend[0].SpentUSD != 123.45 {
		t.Errorf("spend = %+v", r.Spend)
	}
	if !r.Ticks["enrich"].Running || r.Ticks["enrich"].Failures24h != 1 || r.Ticks["email"].Runs24h != 3 {
		t.Errorf("ticks = %+v", r.Ticks)
	}
}

func TestStatusFilters(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	seed(t, db, incidentSQL, fixedNow)
	ctx := context.Background()
	r, err := status.Build(ctx, db.Pool, fixedNow, status.Filter{Workspace: "beta"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Enrich.ByStatus["pending"] != 5 || r.Enrich.ByStatus["unreachable"] != 0 || len(r.Breakers) != 0 || len(r.Email.Campaigns) != 0 {
		t.Errorf("beta report leaks other workspaces: %+v", r.Enrich)
	}
	r, err = status.Build(ctx, db.Pool, fixedNow, status.Filter{Campaign: "night-shift"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Email.Campaigns) != 1 || r.Email.Blocked.OutsideWindow != 4 || r.Email.Overdue != 0 {
		t.Errorf("night-shift: %+v", r.Email)
	}
	var fe *status.FilterError
	if _, err := status.Build(ctx, db.Pool, fixedNow, status.Filter{Workspace: "nope"}); !errors.As(err, &fe) {
		t.Errorf("unknown workspace: err = %v, want FilterError", err)
	}
}

// TestStatusJSONSchema pins the JSON document scripts rely on: its keys and
// their JSON types.
func TestStatusJSONSchema(t *testing.T) {
	t.Parallel()
	r := incidentReport(t, status.Filter{})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	if got := strings.Join(keys(doc), ","); got != "breakers,email,enrich,generated_at,spend,ticks" {
		t.Fatalf("top-level keys = %s", got)
	}
	if _, ok := doc["generated_at"].(string); !ok {
		t.Errorf("generated_at is %T", doc["generated_at"])
	}
	enrich := doc["enrich"].(map[string]any)
	byStatus := enrich["by_status"].(map[string]any)
	if got := strings.Join(keys(byStatus), ","); got != "enriched,enrichment_failed,in_progress,not_found,pending,unreachable" {
		t.Errorf("by_status keys = %s", got)
	}
	for k, v := range byStatus {
		if _, ok := v.(float64); !ok {
			t.Errorf("by_status.%s is %T", k, v)
		}
	}
	blocked := enrich["blocked"].(map[string]any)
	if got := strings.Join(keys(blocked), ","); got != "breaker_open,ceiling,negative_cache,rate_limited" {
		t.Errorf("enrich.blocked keys = %s", got)
	}
	email := doc["email"].(map[string]any)
	for _, k := range []string{"overdue", "oldest_overdue_seconds"} {
		n, ok := email[k].(float64)
		if !ok || n != float64(int64(n)) {
			t.Errorf("email.%s = %v (%T), want an integer", k, email[k], email[k])
		}
	}
	if got := strings.Join(keys(email["blocked"].(map[string]any)), ","); got != "campaign_paused,mailbox_paused,no_email,no_mailbox,outside_window" {
		t.Errorf("email.blocked keys = %s", got)
	}
	mb := email["mailboxes"].([]any)[0].(map[string]any)
	if got := strings.Join(keys(mb), ","); got != "address,bounce_rate,bounce_sends,bounces,cap_today,daily_cap,overdue,pause_reason,paused_until,ramp_next_at,remaining,sent_24h,status,workspace" {
		t.Errorf("mailbox keys = %s", got)
	}
	if _, ok := email["campaigns"].([]any); !ok {
		t.Errorf("email.campaigns is %T", email["campaigns"])
	}
	if _, ok := email["drain"].(map[string]any)["estimated_seconds"].(float64); !ok {
		t.Errorf("email.drain.estimated_seconds = %v", email["drain"])
	}
	br := doc["breakers"].([]any)[0].(map[string]any)
	if got := strings.Join(keys(br), ","); got != "open_until,provider,reason,state,workspace" {
		t.Errorf("breaker keys = %s", got)
	}
	if _, ok := br["open_until"].(string); !ok {
		t.Errorf("open_until is %T", br["open_until"])
	}
	ticks := doc["ticks"].(map[string]any)
	if got := strings.Join(keys(ticks), ","); got != "email,enrich,events,inbox,prune" {
		t.Errorf("tick kinds = %s", got)
	}
	for _, k := range []string{"last_started_at", "last_success_at", "last_failure_at", "runs_24h", "failures_24h"} {
		if _, ok := ticks["enrich"].(map[string]any)[k]; !ok {
			t.Errorf("ticks.enrich has no %s", k)
		}
	}
	sp := doc["spend"].([]any)[0].(map[string]any)
	if got := strings.Join(keys(sp), ","); got != "ceiling_reached,ceiling_usd,in_flight_usd,month_start,spent_usd,workspace" {
		t.Errorf("spend keys = %s", got)
	}
}
