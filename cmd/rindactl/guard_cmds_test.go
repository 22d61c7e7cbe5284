package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The operator commands end to end: workspace set/list, breaker
// open/list/reset with audit rows, and events list/deliver without and with
// a webhook (whose URL never shows up in the output).
func TestGuardOperatorCommands(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, "INSERT INTO workspaces (name) VALUES ('acme')"); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": db.URL, "USER": "dana"}

	if r := runCLI(t, env, "workspace", "set", "acme", "--monthly-usd-ceiling", "250"); r.code != 0 || !strings.Contains(r.stdout, "250.00") {
		t.Fatalf("workspace set: %+v", r)
	}
	if r := runCLI(t, env, "workspace", "set", "acme", "--monthly-usd-ceiling", "lots"); r.code != 2 {
		t.Fatalf("bad ceiling: exit %d, want 2", r.code)
	}
	if r := runCLI(t, env, "workspace", "set", "nope", "--monthly-usd-ceiling", "1"); r.code != 2 || !strings.Contains(r.stderr, `unknown workspace "nope"`) {
		t.Fatalf("unknown workspace: %+v", r)
	}
	r := runCLI(t, env, "workspace", "list", "--output", "json")
	var wl struct {
		Workspaces []struct {
			Name    string   `json:"name"`
			Ceiling *float64 `json:"monthly_usd_ceiling"`
		} `json:"workspaces"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &wl); err != nil || len(wl.Workspaces) != 1 || *wl.Workspaces[0].Ceiling != 250 {
		t.Fatalf("workspace list json: %v %q", err, r.stdout)
	}

	if r := runCLI(t, env, "breaker", "open", "--workspace", "acme", "--provider", "findymail"); r.code != 2 {
		t.Fatalf("open without --for: exit %d, want 2", r.code)
	}
	if r := runCLI(t, env, "breaker", "open", "--workspace", "acme", "--provider", "findymail", "--for", "1h"); r.code != 0 {
		t.Fatalf("breaker open: %+v", r)
	}
	r = runCLI(t, env, "breaker", "list", "--output", "json")
	var bl struct {
		Breakers []struct{ Workspace, Provider, State string } `json:"breakers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &bl); err != nil || len(bl.Breakers) != 1 || bl.Breakers[0].State != "open" {
		t.Fatalf("breaker list json: %v %q", err, r.stdout)
	}
	if r := runCLI(t, env, "breaker", "reset", "--workspace", "acme", "--provider", "findymail"); r.code != 0 || !strings.Contains(r.stdout, "closed the findymail breaker") {
		t.Fatalf("breaker reset: %+v", r)
	}
	var audits int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM audit_log WHERE actor = 'dana'").Scan(&audits); err != nil || audits != 3 {
		t.Fatalf("audit rows = %d (%v), want 3 (workspace.set, breaker.open, breaker.reset)", audits, err)
	}

	// No webhook: events stay pending, exit 0.
	if r := runCLI(t, env, "events", "deliver"); r.code != 0 || !strings.Contains(r.stdout, "RINDA_SLACK_WEBHOOK_URL is not set") {
		t.Fatalf("deliver without webhook: %+v", r)
	}
	// One episode, one alert: breaker_opened waits to be posted, the
	// reset's breaker_closed is only listed.
	if r := runCLI(t, env, "events", "list"); r.code != 0 || strings.Count(r.stdout, "pending") != 1 || strings.Count(r.stdout, "not posted") != 1 {
		t.Fatalf("events list: %+v", r)
	}
	var posts atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		_, _ = w.Write([]byte("ok"))
	}))
	defer hook.Close()
	env["RINDA_SLACK_WEBHOOK_URL"] = hook.URL + "/services/T000/B000/secret"
	r = runCLI(t, env, "events", "deliver", "--output", "json")
	if r.code != 0 || posts.Load() != 1 || strings.Contains(r.stdout+r.stderr, "secret") {
		t.Fatalf("deliver: %+v, %d posts", r, posts.Load())
	}
	if r := runCLI(t, env, "events", "list", "--undelivered"); r.stdout != "no events\n" {
		t.Fatalf("undelivered after delivery: %q", r.stdout)
	}
}
