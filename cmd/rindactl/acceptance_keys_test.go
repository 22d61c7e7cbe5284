package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"maps"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
)

func masterKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Issue 24: two workspaces with their own Findymail keys, against a
// stand-in that accepts only those two keys. Each workspace's calls carry
// its key and draw on its own bucket; alpha's key runs out of credits,
// which opens alpha's breaker only: beta's leads are all answered.
func TestAcceptancePerWorkspaceKeys(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	db, set := a.db, a.set
	master := masterKey(t)
	env, tickEnv := maps.Clone(a.env), maps.Clone(a.tickEnv)
	env["RINDA_SECRET_KEY"], tickEnv["RINDA_SECRET_KEY"] = master, master
	const n = 20
	importAcceptanceLeads(t, env, "alpha", "alpha", n)
	beta := importAcceptanceLeads(t, env, "beta", "beta", n)
	const alphaKey, betaKey = "alpha-FINDYMAIL-key-0001", "beta-FINDYMAIL-key-0002"
	set.Findymail.SetKeys(alphaKey, betaKey) // the host's key is refused
	set.Findymail.SetCredits(alphaKey, 0)

	for ws, key := range map[string]string{"alpha": alphaKey, "beta": betaKey} {
		res := runCLIIn(t, env, key+"\n", "workspace", "set-key", "--workspace", ws, "--provider", "findymail")
		if res.code != exitOK || strings.Contains(res.stdout+res.stderr, key) || !strings.Contains(res.stdout, "own findymail key stored") {
			t.Fatalf("set-key %s: exit %d (or the key was echoed)\n%s%s", ws, res.code, res.stdout, res.stderr)
		}
	}
	if res := runCLIIn(t, env, "", "workspace", "set-key", "--workspace", "beta", "--provider", "findymail"); res.code != exitUsage || !strings.Contains(res.stderr, "no key on standard input") {
		t.Errorf("set-key without a key: exit %d %q, want 2 saying so", res.code, res.stderr)
	}

	res := runCLI(t, tickEnv, "enrich", "tick", "--providers", "findymail", "--concurrency", "10", "--output", "json")
	if res.code != exitOK || strings.Contains(res.stdout+res.stderr, alphaKey) || strings.Contains(res.stdout+res.stderr, betaKey) || strings.Contains(res.stdout+res.stderr, master) {
		t.Fatalf("tick: exit %d (or a key was printed)\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got := leadStatusCounts(t, db, "alpha"); got["unreachable"] != n {
		t.Errorf("alpha %v, want all %d unreachable behind its exhausted key", got, n)
	}
	misses := expectedMisses(beta)
	if got := leadStatusCounts(t, db, "beta"); got["enriched"] != n-misses || got["not_found"] != misses {
		t.Errorf("beta %v, want enriched=%d not_found=%d: another workspace's exhausted key must not stop it", got, n-misses, misses)
	}
	if set.Findymail.CountKey(betaKey) != n || set.Findymail.CountKey(alphaKey) != 1 || set.Findymail.CountKey(providertest.KeyDefault) != 0 {
		t.Errorf("requests by key: beta %d, alpha %d, host %d; want %d, 1 (then its breaker), 0",
			set.Findymail.CountKey(betaKey), set.Findymail.CountKey(alphaKey), set.Findymail.CountKey(providertest.KeyDefault), n)
	}
	var open, buckets string
	if err := db.Pool.QueryRow(context.Background(), `SELECT
		(SELECT string_agg(w.name || '/' || b.provider, ',' ORDER BY w.name) FROM breakers b JOIN workspaces w ON w.id = b.workspace_id WHERE b.state <> 'closed'),
		(SELECT string_agg(key, ',' ORDER BY key) FROM rate_limits)`).Scan(&open, &buckets); err != nil {
		t.Fatal(err)
	}
	if open != "alpha/findymail" {
		t.Errorf("open breakers %q, want alpha's findymail only", open)
	}
	if buckets != "findymail/ws/1,findymail/ws/2" {
		t.Errorf("token buckets %q, want one per workspace key and none for the host's", buckets)
	}

	// A wrong master key is a clear error, exit 2, and no key in sight.
	wrong := maps.Clone(tickEnv)
	wrong["RINDA_SECRET_KEY"] = masterKey(t)
	res = runCLI(t, wrong, "enrich", "tick", "--providers", "findymail")
	if res.code != exitUsage || !strings.Contains(res.stderr, "is not the one workspace") || strings.Contains(res.stderr, wrong["RINDA_SECRET_KEY"]) {
		t.Errorf("wrong master key: exit %d %q; want 2 naming the problem", res.code, res.stderr)
	}
	wrongOwner := maps.Clone(env)
	wrongOwner["RINDA_SECRET_KEY"] = wrong["RINDA_SECRET_KEY"]
	// Exit 2, as the enrich tick exits with the wrong key (issue 38: doctor's
	// exit codes are the ticks').
	if res := runCLI(t, wrongOwner, "doctor"); res.code != exitUsage || !strings.Contains(res.stdout+res.stderr, "workspace provider keys:") {
		t.Errorf("doctor with the wrong master key: exit %d, want 2 reporting the keys\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := runCLI(t, env, "doctor"); !strings.Contains(res.stdout, "2 workspace provider key(s) open with the master key") {
		t.Errorf("doctor does not confirm the keys open:\n%s%s", res.stdout, res.stderr)
	}
	delete(wrong, "RINDA_SECRET_KEY")
	if res := runCLI(t, wrong, "enrich", "tick", "--providers", "findymail"); res.code != exitUsage || !strings.Contains(res.stderr, "RINDA_SECRET_KEY") {
		t.Errorf("no master key: exit %d %q; want 2 naming RINDA_SECRET_KEY", res.code, res.stderr)
	}

	// Rotation: every key resealed at once; the old master key is refused after.
	next := masterKey(t)
	rot := maps.Clone(env)
	rot["RINDA_SECRET_KEY_NEW"] = next
	if res := runCLI(t, rot, "secrets", "rotate"); res.code != exitOK || !strings.Contains(res.stdout, "resealed 2 provider key(s)") || strings.Contains(res.stdout+res.stderr, next) {
		t.Fatalf("rotate: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := runCLI(t, tickEnv, "enrich", "tick", "--providers", "findymail"); res.code != exitUsage {
		t.Errorf("tick on the old master key after rotation: exit %d, want 2", res.code)
	}
	tickEnv["RINDA_SECRET_KEY"] = next
	if res := runCLI(t, tickEnv, "enrich", "tick", "--providers", "findymail"); res.code != exitOK {
		t.Errorf("tick on the new master key: exit %d\n%s", res.code, res.stderr)
	}
	var audit int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_log WHERE action IN ('workspace.set_key', 'secrets.rotate')`).Scan(&audit); err != nil || audit != 3 {
		t.Errorf("%d audit rows for set-key and rotate (%v), want 3", audit, err)
	}
}
