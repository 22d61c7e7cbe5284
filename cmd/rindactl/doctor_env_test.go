package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/schedule"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// healthyTicks are recent successes of every kind (prune on its hourly
// spec).
const healthyTicks = `INSERT INTO tick_runs (kind, tick_id, started_at, finished_at, exit_status, host, pid)
	SELECT k, k || '-ok', now() - interval '20 seconds', now() - interval '10 seconds', 0, 'h', 1
	FROM unnest(ARRAY['enrich', 'email', 'events', 'inbox']) AS k
	UNION ALL SELECT 'prune', 'p-ok', now() - interval '50 minutes', now() - interval '49 minutes', 0, 'h', 1`

func envFileOf(t *testing.T, vars map[string]string) string {
	t.Helper()
	var b strings.Builder
	for k, v := range vars {
		line, err := schedule.EnvLine(k, v)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	return envFile(t, b.String())
}

// Issue 38: doctor checked the database and master key of its own
// environment, not of the env file the units load: with a bad
// DATABASE_URL or a wrong key only in the env file it exited 0 while every
// firing failed. --prune off made it exit 1 on a healthy setup, and
// sslmode=require against a server without TLS said only "connection
// failed".
func TestDoctorChecksWhatTheUnitsGet(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	if _, err := db.Pool.Exec(context.Background(), healthyTicks); err != nil {
		t.Fatal(err)
	}
	// A workspace with its own key, sealed with the host's master key.
	master, other := masterKey(t), masterKey(t)
	own := map[string]string{"DATABASE_URL": db.URL, "RINDA_SECRET_KEY": master, "RINDA_HUNTER_API_KEY": "hk-test"}
	csv := filepath.Join(t.TempDir(), "leads.csv")
	if err := os.WriteFile(csv, []byte("first_name,last_name,company_domain\nAda,Lovelace,analytical.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, own, "import", "leads", "--workspace", "acme", csv); res.code != exitOK {
		t.Fatalf("import: %d %s", res.code, res.stderr)
	}
	if res := runCLIIn(t, own, "own-hunter-key-0001\n", "workspace", "set-key", "--workspace", "acme", "--provider", "hunter"); res.code != exitOK {
		t.Fatalf("set-key: %d %s", res.code, res.stderr)
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{"DATABASE_URL": db.URL, "RINDA_SECRET_KEY": master, "RINDA_HUNTER_API_KEY": "hk-test"}
		m[k] = v
		return m
	}
	noTLS := db.URL + map[bool]string{true: "&", false: "?"}[strings.Contains(db.URL, "?")] + "sslmode=require"
	for _, tc := range []struct {
		name    string
		file    map[string]string
		args    []string
		code    int
		problem string
	}{
		{name: "the same setup", file: with("RINDA_HUNTER_API_KEY", "hk-test"), code: exitOK},
		{name: "an invalid DATABASE_URL only in the env file", file: with("DATABASE_URL", "postgres://rinda@db.internal:notaport/rinda"),
			code: exitUsage, problem: "database (DATABASE_URL of "},
		{name: "an unreachable DATABASE_URL only in the env file", file: with("DATABASE_URL", unreachableDB),
			code: exitError, problem: "cannot connect to Postgres at 127.0.0.1:1"},
		{name: "a wrong master key only in the env file", file: with("RINDA_SECRET_KEY", other),
			code: exitUsage, problem: "workspace provider keys: "},
		{name: "sslmode=require against a server without TLS", file: with("DATABASE_URL", noTLS),
			code: exitError, problem: "the server does not accept TLS, which sslmode=require"},
		{name: "prune not on this host", file: with("RINDA_HUNTER_API_KEY", "hk-test"), args: []string{"--prune", "off"}, code: exitOK},
	} {
		args := append([]string{"doctor", "--env-file", envFileOf(t, tc.file)}, tc.args...)
		res := runCLI(t, own, args...)
		if res.code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, res.code, tc.code, res.stdout, res.stderr)
		}
		if tc.problem != "" && (!strings.Contains(res.stderr, "problem  ") || !strings.Contains(res.stderr, tc.problem)) {
			t.Errorf("%s: stderr lacks a problem with %q:\n%s", tc.name, tc.problem, res.stderr)
		}
		if strings.Contains(res.stdout+res.stderr, master) || strings.Contains(res.stdout+res.stderr, other) {
			t.Errorf("%s: doctor printed a master key", tc.name)
		}
	}
}
