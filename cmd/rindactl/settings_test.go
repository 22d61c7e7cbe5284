package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/schedule"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// unreachableDB is a database URL nothing listens at: a tick that passed
// its start checks exits 1 connecting, one that rejected a setting exits 2
// before.
const unreachableDB = "postgres://rinda@127.0.0.1:1/rinda"

func rejects(s tickSetting, kind tickkind.Kind) bool {
	return s.Kinds == nil || slices.Contains(s.Kinds, kind)
}

// Issue 38: doctor passed RINDA_CREDITS_REFRESH=1s, RINDA_SMTP_HELO=myhost,
// RINDA_HUNTER_RUNWAY_ALERT=soon (the ticks exit 2) and
// RINDA_SLACK_WEBHOOK_URL=ftp://x. Walking every setting: each tick kind
// that reads it exits 2 naming it, the others start; doctor, given it in
// the env file, exits 2 naming exactly the units of those kinds, and with
// an accepted value names none.
func TestSettingsAgree(t *testing.T) {
	t.Parallel()
	for _, s := range tickSettingNames() {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			for _, value := range []string{s.Bad, s.Good} {
				bad := value == s.Bad
				env := map[string]string{"DATABASE_URL": unreachableDB, "RINDA_HUNTER_API_KEY": "hk-test", s.Name: value}
				for _, kind := range tickkind.All {
					res := runCLI(t, env, kind.Args()...)
					want := exitError // started, then found no database
					if bad && rejects(s, kind) {
						want = exitUsage
					}
					if res.code != want || (want == exitUsage && !strings.Contains(res.stderr, s.Name)) {
						t.Errorf("%s=%q: rindactl %s exited %d, want %d naming it\n%s", s.Name, value, strings.Join(kind.Args(), " "), res.code, want, res.stderr)
					}
				}
				var file strings.Builder
				for _, k := range []string{"DATABASE_URL", "RINDA_HUNTER_API_KEY", s.Name} {
					line, err := schedule.EnvLine(k, env[k])
					if err != nil {
						t.Fatal(err)
					}
					file.WriteString(line + "\n")
				}
				res := runCLI(t, map[string]string{}, "doctor", "--output", "json", "--env-file", envFile(t, file.String()))
				var rep doctorReport
				if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
					t.Fatalf("doctor --output json: %v\n%s", err, res.stdout)
				}
				want := exitError // the database is unreachable
				for _, kind := range tickkind.All {
					named := strings.Contains(rep.Units[string(kind)], s.Name)
					if named != (bad && rejects(s, kind)) || (!named && rep.Units[string(kind)] != "ok") {
						t.Errorf("%s=%q: doctor's unit %s is %q", s.Name, value, kind, rep.Units[string(kind)])
					}
					if named {
						want = exitUsage
					}
				}
				if res.code != want {
					t.Errorf("%s=%q: doctor exited %d, want %d\n%s", s.Name, value, res.code, want, res.stderr)
				}
			}
		})
	}
}

// TestSettingsAreAllWalked: every RINDA_* variable a tick reads before it
// connects is in tickSettingNames (so doctor checks it as the tick does),
// or takes any value: a key, a secret, the master key (checked against
// the database).
func TestSettingsAreAllWalked(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, s := range tickSettingNames() {
		known[s.Name] = true
	}
	anyValue := func(name string) bool {
		return strings.HasSuffix(name, "_API_KEY") || strings.HasPrefix(name, "RINDA_SECRET_KEY")
	}
	for _, kind := range tickkind.All {
		var mu sync.Mutex
		read := map[string]bool{}
		ios, _, _, _ := cliio.Test()
		f := newFactory(ios, func(k string) string {
			mu.Lock()
			defer mu.Unlock()
			read[k] = true
			if k == "DATABASE_URL" {
				return unreachableDB
			}
			if k == "RINDA_HUNTER_API_KEY" {
				return "hk-test"
			}
			return ""
		})
		if code := execute(context.Background(), f, kind.Args()); code != exitError {
			t.Fatalf("%s: exit %d, want 1 (no database)", kind, code)
		}
		for name := range read {
			if strings.HasPrefix(name, "RINDA_") && !known[name] && !anyValue(name) {
				t.Errorf("the %s tick reads %s, which tickSettingNames lacks: doctor would not check it", kind, name)
			}
		}
	}
}
