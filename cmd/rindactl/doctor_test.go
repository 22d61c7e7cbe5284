package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/schedule"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// TestDoctorTickHistory seeds tick_runs and checks which histories doctor
// calls problems (exit 1, one stderr line each) and which only notes.
// agoSeconds matches the seconds of an "ago" duration in doctor's lines.
var agoSeconds = regexp.MustCompile(`(\d+m)\d+(\.\d+)?s ago`)

func TestDoctorTickHistory(t *testing.T) {
	t.Parallel()
	// Each seed row: kind, tick_id, started and finished ages, exit status.
	const (
		enrichOK     = `('enrich', 'e-ok', now() - interval '40 seconds', now() - interval '30 seconds', 0)`
		emailOK      = `('email', 'm-ok', now() - interval '20 seconds', now() - interval '10 seconds', 0)`
		enrichOld    = `('enrich', 'e-old', now() - interval '10 minutes', now() - interval '10 minutes', 0)`
		enrichFailed = `('enrich', 'e-bad', now() - interval '30 seconds', now() - interval '20 seconds', 1)`
		emailCrashed = `('email', 'host-a:4242:dead', now() - interval '1 hour', NULL, NULL)`
		emailRunning = `('email', 'm-running', now() - interval '30 seconds', NULL, NULL)`
		emailAncient = `('email', 'm-ancient', now() - interval '3 days', NULL, NULL)`
		emailLongAgo = `('email', 'm-long-ago', now() - interval '3 days', now() - interval '3 days', 0)`
		enrichRecent = `('enrich', 'e-recent', now() - interval '5 seconds', now() - interval '1 second', 0)`
		eventsOK     = `('events', 'v-ok', now() - interval '20 seconds', now() - interval '10 seconds', 0)`
		eventsOld    = `('events', 'v-old', now() - interval '10 minutes', now() - interval '10 minutes', 0)`
		inboxOK      = `('inbox', 'i-ok', now() - interval '20 seconds', now() - interval '10 seconds', 0)`
		pruneOK      = `('prune', 'p-ok', now() - interval '50 minutes', now() - interval '49 minutes', 0)`
		pruneOld     = `('prune', 'p-old', now() - interval '4 hours', now() - interval '4 hours', 0)`
		pruneLong    = `('prune', 'p-long', now() - interval '30 minutes', NULL, NULL)`
	)
	// eventsFailing are the recent runs of an events tick that keeps failing.
	eventsFailing := []string{
		`('events', 'v-bad-1', now() - interval '3 minutes', now() - interval '3 minutes', 1, 'cannot connect to Postgres')`,
		`('events', 'v-bad-2', now() - interval '2 minutes', now() - interval '2 minutes', 1, 'cannot connect to Postgres')`,
		`('events', 'v-bad-3', now() - interval '1 minute', now() - interval '1 minute', 1, 'cannot connect to Postgres')`,
	}
	cases := []struct {
		name     string
		rows     []string
		args     []string
		problems []string // substrings, one per expected problem line
		notes    []string
	}{
		{name: "never ran is a note", notes: []string{"email tick never ran", "enrich tick never ran", "events tick never ran", "inbox tick never ran", "prune tick never ran"}},
		// prune runs hourly: judged by its spec, and a run that
		// takes half an hour has not crashed.
		{name: "an hourly prune, one run under way", rows: []string{enrichOK, emailOK, pruneOK, pruneLong}},
		{name: "a prune that stopped running", rows: []string{enrichOK, emailOK, pruneOld},
			problems: []string{`prune tick: last success 4h0m0s ago, more than 3 × its interval 1h0m0s (--prune "17 * * * *")`}},
		{name: "a prune scheduled every 2h", rows: []string{enrichOK, emailOK, pruneOld}, args: []string{"--prune", "0 */2 * * *"}},
		{name: "an events tick that keeps failing", rows: append([]string{enrichOK, emailOK, eventsOld}, eventsFailing...),
			problems: []string{"events tick: last success 10m0s ago, more than 3 × --interval 1m0s (newest failure: cannot connect to Postgres)"}},
		{name: "fresh successes", rows: []string{enrichOK, emailOK}},
		{name: "stale beyond three intervals", rows: []string{enrichOld, emailOK},
			problems: []string{"enrich tick: last success 10m0s ago, more than 3 × --interval 1m0s"}},
		{name: "a longer interval tolerates it", rows: []string{enrichOld, emailOK}, args: []string{"--interval", "5m"}},
		{name: "only failures", rows: []string{enrichFailed}, problems: []string{"enrich tick: none of its 1 run(s) succeeded (newest failure: exit status 1)"},
			notes: []string{"email tick never ran"}},
		{name: "a first run under way is not a failure", rows: []string{enrichOK, emailRunning},
			notes: []string{"email tick never ran"}},
		{name: "crashed, running and ancient unfinished ticks", rows: []string{enrichOK, emailOK, emailCrashed, emailRunning, emailAncient},
			problems: []string{"email tick: 1 run(s) in the last 24 hours never finished (newest host-a:4242:dead)"}},
		{name: "a shorter lease sees the running tick as crashed", rows: []string{enrichOK, emailOK, emailRunning}, args: []string{"--lease", "10s"},
			problems: []string{"email tick: 1 run(s) in the last 24 hours never finished (newest m-running)"}},
		{name: "a success days ago", rows: []string{enrichRecent, emailLongAgo},
			problems: []string{"email tick: last success 72h0m0s ago"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := storetest.New(t)
			if len(tc.rows) > 0 {
				rows := tc.rows
				if !strings.Contains(strings.Join(rows, ""), "'events'") {
					rows = append(rows, eventsOK)
				}
				rows = append(rows, inboxOK)
				if !strings.Contains(strings.Join(rows, ""), "'prune'") {
					rows = append(rows, pruneOK)
				}
				for i, r := range rows {
					if strings.Count(r, ",") == 4 {
						rows[i] = strings.TrimSuffix(r, ")") + ", NULL)"
					}
				}
				if _, err := db.Pool.Exec(context.Background(), `INSERT INTO tick_runs (kind, tick_id, started_at, finished_at, exit_status, error, host, pid)
					SELECT k, id, s, f, x, e, 'host-a', 4242 FROM (VALUES `+strings.Join(rows, ", ")+`) AS v(k, id, s, f, x, e)`); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"DATABASE_URL": db.URL}
			tc.args = append(tc.args, "--env-file", goodEnvFile(t, db.URL))
			res := runCLI(t, env, append([]string{"doctor"}, tc.args...)...)
			want := exitOK
			if len(tc.problems) > 0 {
				want = exitError
			}
			if res.code != want {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, want, res.stdout, res.stderr)
			}
			// A busy machine runs doctor seconds after the rows were
			// written: "4h0m4s ago" is the "4h0m0s ago" the case means.
			res.stderr = agoSeconds.ReplaceAllString(res.stderr, "${1}0s ago")
			res.stdout = agoSeconds.ReplaceAllString(res.stdout, "${1}0s ago")
			problemLines := 0
			for _, line := range strings.Split(strings.TrimSpace(res.stderr), "\n") {
				if strings.HasPrefix(line, "problem  ") {
					problemLines++
				}
			}
			if problemLines != len(tc.problems) {
				t.Errorf("%d problem lines, want %d:\n%s", problemLines, len(tc.problems), res.stderr)
			}
			for _, p := range tc.problems {
				if !strings.Contains(res.stderr, "problem  "+p) {
					t.Errorf("stderr lacks problem %q:\n%s", p, res.stderr)
				}
			}
			for _, n := range tc.notes {
				if !strings.Contains(res.stdout, "info     "+n) {
					t.Errorf("stdout lacks note %q:\n%s", n, res.stdout)
				}
			}

			res = runCLI(t, env, append([]string{"doctor", "--output", "json"}, tc.args...)...)
			var rep doctorReport
			if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
				t.Fatalf("doctor --output json: %v\n%s", err, res.stdout)
			}
			if rep.OK != (len(tc.problems) == 0) || len(rep.Problems) != len(tc.problems) || len(rep.Notes) != len(tc.notes) {
				t.Errorf("json report %+v, want %d problems and %d notes", rep, len(tc.problems), len(tc.notes))
			}
		})
	}
}

// goodEnvFile is an env file in the format sh and systemd read alike, with
// what every unit needs to start (the database at dbURL and a finder's
// key).
func goodEnvFile(t *testing.T, dbURL string) string {
	t.Helper()
	line, err := schedule.EnvLine("DATABASE_URL", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return envFile(t, "# test\n"+line+"\nRINDA_HUNTER_API_KEY=hk-test\n")
}

func envFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Issue 27: doctor exited 0 on a host with no provider key while the
// generated enrich unit then failed every minute ("no finder is usable on
// this host"). It now checks that each scheduled kind can start with the
// environment its unit gets, and names the unit that would fail.
func TestDoctorNamesTheUnitThatWouldFail(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	recent := `INSERT INTO tick_runs (kind, tick_id, started_at, finished_at, exit_status, host, pid)
		SELECT k, k || '-ok', now() - interval '20 seconds', now() - interval '10 seconds', 0, 'h', 1
		FROM unnest(ARRAY['enrich', 'email', 'events', 'inbox']) AS k`
	if _, err := db.Pool.Exec(context.Background(), recent); err != nil {
		t.Fatal(err)
	}
	dbLine, err := schedule.EnvLine("DATABASE_URL", db.URL)
	if err != nil {
		t.Fatal(err)
	}
	keyless := envFile(t, dbLine+"\n")
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		code    int
		problem string
		units   map[string]string
	}{
		{name: "no key in the env file", env: map[string]string{"DATABASE_URL": db.URL, "RINDA_HUNTER_API_KEY": "only-in-this-shell"},
			args: []string{"--env-file", keyless}, code: exitUsage,
			problem: "rindactl-enrich unit (enrich tick) would fail on this host with " + keyless + ": no finder is usable on this host: RINDA_FINDYMAIL_API_KEY is not set",
			units:   map[string]string{"email": "ok", "events": "ok", "inbox": "ok"}},
		{name: "enrichment not scheduled here", env: map[string]string{"DATABASE_URL": db.URL},
			args: []string{"--env-file", keyless, "--enrich", "off"}, code: exitOK,
			units: map[string]string{"enrich": "off", "email": "ok"}},
		// No --env-file: the default path is absent here (Kubernetes,
		// rindactl run), so the units get this environment.
		{name: "no env file: this environment", env: map[string]string{"DATABASE_URL": db.URL}, code: exitUsage,
			problem: "rindactl-enrich unit (enrich tick) would fail on this host with this host's environment: no finder is usable"},
		{name: "a key in this environment and no env file", env: map[string]string{"DATABASE_URL": db.URL, "RINDA_FINDYMAIL_API_KEY": "fm"},
			code: exitOK, units: map[string]string{"enrich": "ok"}},
		{name: "a bad in-doubt retry", env: map[string]string{"DATABASE_URL": db.URL, "RINDA_FINDYMAIL_API_KEY": "fm", "RINDA_IN_DOUBT_RETRY_AFTER": "soon"},
			code: exitUsage, problem: `rindactl-enrich unit (enrich tick) would fail on this host with this host's environment: invalid RINDA_IN_DOUBT_RETRY_AFTER "soon": use a duration such as 24h, or off`,
			units: map[string]string{"email": "ok"}},
		{name: "env file without DATABASE_URL", env: map[string]string{"DATABASE_URL": db.URL},
			args: []string{"--env-file", envFile(t, "RINDA_HUNTER_API_KEY=hk\n")}, code: exitUsage,
			problem: "rindactl-email unit (email tick) would fail on this host with", units: map[string]string{"email": "no DATABASE_URL"}},
	} {
		args := tc.args
		res := runCLI(t, tc.env, append([]string{"doctor"}, args...)...)
		if res.code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, res.code, tc.code, res.stdout, res.stderr)
		}
		if tc.problem != "" && !strings.Contains(res.stderr, "problem  "+tc.problem) {
			t.Errorf("%s: stderr lacks %q:\n%s", tc.name, tc.problem, res.stderr)
		}
		if strings.Contains(res.stdout+res.stderr, "only-in-this-shell") {
			t.Errorf("%s: doctor printed a key", tc.name)
		}
		res = runCLI(t, tc.env, append([]string{"doctor", "--output", "json"}, args...)...)
		var rep doctorReport
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, res.stdout)
		}
		for kind, want := range tc.units {
			if rep.Units[kind] != want {
				t.Errorf("%s: units[%s] = %q, want %q", tc.name, kind, rep.Units[kind], want)
			}
		}
	}
}

// Issue 16: doctor checks the env file the crontab and systemd units load;
// a line sh and systemd read differently is a problem (exit 1) with its
// line number and without its value.
func TestDoctorChecksTheEnvFile(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_HUNTER_API_KEY": "hk-test"}
	bad := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(bad, []byte("# ok\nDATABASE_URL=postgres://u:s3cr3t@h/db?sslmode=disable&application_name=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, env, "doctor", "--env-file", bad)
	if res.code != exitUsage || !strings.Contains(res.stderr, "problem  env file "+bad+": line 2: DATABASE_URL: an unquoted value") || strings.Contains(res.stderr+res.stdout, "s3cr3t") {
		t.Errorf("bad env file: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	missing := filepath.Join(t.TempDir(), "absent")
	res = runCLI(t, env, "doctor", "--env-file", missing)
	if res.code != exitError || !strings.Contains(res.stderr, "problem  env file "+missing+": no such file") {
		t.Errorf("missing named env file: exit %d\n%s", res.code, res.stderr)
	}
	res = runCLI(t, env, "doctor", "--env-file", goodEnvFile(t, db.URL))
	if res.code != exitOK || !strings.Contains(res.stdout, "reads the same in sh and systemd") || strings.Contains(res.stderr, "env file") {
		t.Errorf("good env file: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestDoctorRejectsNonPositiveDurations(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--interval", "0s"}, {"--lease", "-1m"}} {
		res := runCLI(t, map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}, append([]string{"doctor"}, args...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, "--interval and --lease must be positive") {
			t.Errorf("%v: exit %d %q, want 2 with the fix", args, res.code, res.stderr)
		}
	}
}

// Issue 27: on a schedule more than 5 minutes apart, ticks run up to its
// --max-duration with a lease grown to fit (tick.FitLease); doctor judged
// them by --interval 1m and --lease 5m and called a running */10 email tick
// crashed and its last success stale. Given the kind's spec, doctor judges
// it by that spec's interval and lease.
func TestDoctorJudgesAKindByItsSpec(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO tick_runs (kind, tick_id, started_at, finished_at, exit_status, host, pid) VALUES
		('email', 'm-ok', now() - interval '20 minutes', now() - interval '19 minutes', 0, 'h', 1),
		('email', 'm-running', now() - interval '8 minutes', NULL, NULL, 'h', 1),
		('enrich', 'e-ok', now() - interval '20 seconds', now() - interval '10 seconds', 0, 'h', 1),
		('events', 'v-ok', now() - interval '20 seconds', now() - interval '10 seconds', 0, 'h', 1),
		('inbox', 'i-ok', now() - interval '20 seconds', now() - interval '10 seconds', 0, 'h', 1)`); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": db.URL}
	res := runCLI(t, env, "doctor", "--env-file", goodEnvFile(t, db.URL))
	if res.code != exitError || !strings.Contains(res.stderr, "email tick: last success 19m") || !strings.Contains(res.stderr, "newest m-running") {
		t.Fatalf("by the every-minute defaults: exit %d\n%s", res.code, res.stderr)
	}
	res = runCLI(t, env, "doctor", "--env-file", goodEnvFile(t, db.URL), "--email", "*/10 * * * *")
	if res.code != exitOK || strings.Contains(res.stderr, "problem") {
		t.Errorf("by the email spec */10 (30 minutes stale, lease 651s): exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// Issue 25: doctor checks RINDA_UNSUBSCRIBE_BASE_URL in the environment
// the email unit gets. Unset: a warning (exit 0) that messages carry only
// the mailto: unsubscribe. Set but not an absolute https URL (http only on
// a loopback host): the email unit would exit 2 on every firing, so a
// problem naming the fix. Nothing was checked: doctor said ok, then every
// email tick failed.
func TestDoctorChecksTheUnsubscribeBaseURL(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	dbLine, err := schedule.EnvLine("DATABASE_URL", db.URL)
	if err != nil {
		t.Fatal(err)
	}
	base := dbLine + "\nRINDA_HUNTER_API_KEY=hk-test\n"
	for _, tc := range []struct {
		name, line string
		args       []string
		code       int
		state      string // the JSON's unsubscribe_base_url
		stdout     string
		problem    string
	}{
		{name: "unset", code: exitOK, state: "unset",
			stdout: "warning  RINDA_UNSUBSCRIBE_BASE_URL is not set for the email unit: messages carry only the mailto: unsubscribe"},
		{name: "https", line: "RINDA_UNSUBSCRIBE_BASE_URL=https://unsubscribe.acme.example/u/\n", code: exitOK, state: "ok",
			stdout: "ok       unsubscribe one-click URL https://unsubscribe.acme.example/u/TOKEN"},
		{name: "http on loopback", line: "RINDA_UNSUBSCRIBE_BASE_URL=http://127.0.0.1:8080\n", code: exitOK, state: "ok"},
		{name: "http elsewhere", line: "RINDA_UNSUBSCRIBE_BASE_URL=http://unsubscribe.acme.example\n", code: exitUsage,
			state:   `RINDA_UNSUBSCRIBE_BASE_URL="http://unsubscribe.acme.example": use https (one-click unsubscribe requires it; http is accepted only on a loopback host)`,
			problem: "rindactl-email unit (email tick) would fail on this host with"},
		{name: "not absolute", line: "RINDA_UNSUBSCRIBE_BASE_URL=unsubscribe.acme.example\n", code: exitUsage,
			state: `RINDA_UNSUBSCRIBE_BASE_URL="unsubscribe.acme.example" is not a URL like https://unsubscribe.example.com`, problem: "is not a URL like https://unsubscribe.example.com"},
		// Set but empty is unset to every tick (the factory's LookupEnv),
		// so to doctor too: doctor and the ticks read it alike.
		{name: "set but empty", line: "RINDA_UNSUBSCRIBE_BASE_URL=\n", code: exitOK, state: "unset"},
		{name: "a password in it is never shown", line: "RINDA_UNSUBSCRIBE_BASE_URL=https://ops:pw-s3cr3t@unsubscribe.acme.example\n", code: exitUsage,
			problem: "use a URL without user, query or fragment"},
		{name: "email not scheduled here", line: "RINDA_UNSUBSCRIBE_BASE_URL=http://unsubscribe.acme.example\n", args: []string{"--email", "off"}, code: exitOK, state: "off"},
	} {
		env := map[string]string{"DATABASE_URL": db.URL}
		args := append([]string{"--env-file", envFile(t, base+tc.line)}, tc.args...)
		res := runCLI(t, env, append([]string{"doctor"}, args...)...)
		if res.code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, res.code, tc.code, res.stdout, res.stderr)
		}
		if tc.stdout != "" && !strings.Contains(res.stdout, tc.stdout) {
			t.Errorf("%s: stdout lacks %q:\n%s", tc.name, tc.stdout, res.stdout)
		}
		if tc.problem != "" && (!strings.Contains(res.stderr, "problem  ") || !strings.Contains(res.stderr, tc.problem) || !strings.Contains(res.stderr, "RINDA_UNSUBSCRIBE_BASE_URL")) {
			t.Errorf("%s: stderr lacks a problem naming RINDA_UNSUBSCRIBE_BASE_URL and %q:\n%s", tc.name, tc.problem, res.stderr)
		}
		if strings.Contains(res.stdout+res.stderr, "pw-s3cr3t") {
			t.Errorf("%s: doctor printed the URL's password", tc.name)
		}
		res = runCLI(t, env, append([]string{"doctor", "--output", "json"}, args...)...)
		var rep struct {
			Unsubscribe string   `json:"unsubscribe_base_url"`
			Warnings    []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, res.stdout)
		}
		if tc.state != "" && rep.Unsubscribe != tc.state {
			t.Errorf("%s: unsubscribe_base_url = %q, want %q", tc.name, rep.Unsubscribe, tc.state)
		}
		if warned := len(rep.Warnings) > 0; warned != (tc.state == "unset") {
			t.Errorf("%s: warnings %q", tc.name, rep.Warnings)
		}
	}
}
