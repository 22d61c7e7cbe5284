package main

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
	res := runCLI(t, nil, "--help")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, c := range []string{"migrate", "import", "enroll", "enrich", "email", "inbox", "status", "requeue", "breaker", "why", "workspace", "events", "schedule", "run", "demo", "bench", "doctor"} {
		found := false
		for _, line := range strings.Split(res.stdout, "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == c {
				found = true
			}
		}
		if !found {
			t.Errorf("--help does not list %q with a purpose", c)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"frobnicate"}, {"status", "--no-such-flag"}, {"migrate", "sideways"}, {"status", "--output", "yaml"}} {
		res := runCLI(t, map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}, args...)
		if res.code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, res.code, res.stderr)
		}
		if !strings.HasPrefix(res.stderr, "rindactl: ") {
			t.Errorf("%v: stderr %q does not start with the error line", args, res.stderr)
		}
	}
}

func TestWrongDatabaseURLHidesPassword(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://ops:Sup3r-S3cret@127.0.0.1:1/rinda"}
	// doctor --enrich off: with no provider key here the enrich unit would
	// exit 2, which doctor reports as the tick would (issue 38).
	for _, args := range [][]string{{"migrate"}, {"status"}, {"doctor", "--enrich", "off"}, {"--help"}} {
		res := runCLI(t, env, args...)
		if strings.Contains(res.stdout+res.stderr, "Sup3r-S3cret") {
			t.Fatalf("%v leaks the password: %q %q", args, res.stdout, res.stderr)
		}
		if args[0] == "--help" {
			continue
		}
		if res.code != 1 {
			t.Errorf("%v: exit %d, want 1", args, res.code)
		}
		if n := lines(res.stderr); n == 0 || n > 3 {
			t.Errorf("%v: want a short error (1-3 lines), got %d: %q", args, n, res.stderr)
		}
		if !strings.Contains(res.stderr, "127.0.0.1:1") {
			t.Errorf("%v: error does not name host and port: %q", args, res.stderr)
		}
	}
}

func TestMigrateCommandTwice(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	res := runCLI(t, env, "migrate")
	if res.code != 0 || !strings.Contains(res.stdout, "up to date") {
		t.Fatalf("migrate on a migrated database: exit %d, %q %q", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, env, "migrate", "status", "--output", "json")
	var st struct {
		Migrations []struct {
			Version int64
			Applied bool
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil || len(st.Migrations) == 0 {
		t.Fatalf("migrate status json: %v %q", err, res.stdout)
	}
	for _, m := range st.Migrations {
		if !m.Applied {
			t.Errorf("version %d not applied", m.Version)
		}
	}
}

func TestDoctorReportsProvidersWithoutKeys(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_HUNTER_API_KEY": "hk_live_abcdef123456"}
	res := runCLI(t, env, "doctor", "--output", "json")
	if res.code != 0 {
		t.Fatalf("doctor: exit %d: %s", res.code, res.stderr)
	}
	if strings.Contains(res.stdout, "hk_live_abcdef123456") {
		t.Fatal("doctor printed an API key")
	}
	var rep doctorReport
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.OK || !rep.Providers["HUNTER"] || rep.Providers["FINDYMAIL"] {
		t.Fatalf("unexpected report: %+v", rep)
	}
}

// Issue 16: --version names the build when `make` did not stamp one.
func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{nil, "dev"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "dev-0123456789ab-dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		if got := versionFrom(tc.bi); got != tc.want {
			t.Errorf("versionFrom(%+v) = %q, want %q", tc.bi, got, tc.want)
		}
	}
}
