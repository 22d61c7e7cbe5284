package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.yaml.in/yaml/v3"

	"github.com/rindactl/rindactl/internal/schedule"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// unitCommand is one generated unit's command, ready to run.
type unitCommand struct {
	name string   // where it came from: format and unit
	kind string   // the tick kind it runs (tick_runs.kind)
	argv []string // what the scheduler executes
	env  []string // the environment the scheduler gives it
}

// buildRindactl builds the binary the units run, as an operator would.
func buildRindactl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rindactl")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// hostileDSN connects as a tick role whose name and password hold every
// character the env file must survive: & (sh backgrounds the assignment),
// $ (sh expands it), spaces and both quotes. A mangled name cannot log in.
func hostileDSN(t *testing.T, db *storetest.DB) string {
	t.Helper()
	ctx := context.Background()
	role := `rinda &$HOME "q'` + db.Name[len(db.Name)-6:]
	if _, err := db.Pool.Exec(ctx, "CREATE ROLE "+pgx.Identifier{role}.Sanitize()+" LOGIN IN ROLE "+storetest.TickRole); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.Pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+pgx.Identifier{role}.Sanitize())
	})
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	quote := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return fmt.Sprintf("host=%s port=%s dbname=%s user='%s' password='%s' sslmode=disable application_name='rindactl units'",
		u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/"), quote.Replace(role), quote.Replace(`p&ss $1 "x'y`))
}

// cronCommands parses a crontab: its SHELL= and PATH= settings and each
// job line's command after the five schedule fields, run by SHELL -c.
func cronCommands(t *testing.T, source, text, stubDir string) []unitCommand {
	t.Helper()
	job := regexp.MustCompile(`^(\S+\s+){5}(.+)$`)
	shell, path := "/bin/sh", "/usr/bin:/bin"
	var out []unitCommand
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "SHELL="):
			shell = strings.TrimPrefix(line, "SHELL=")
		case strings.HasPrefix(line, "PATH="):
			path = strings.TrimPrefix(line, "PATH=")
		default:
			m := job.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("%s: not a crontab job line: %q", source, line)
			}
			kind := regexp.MustCompile(`-t rindactl-(\w+)`).FindStringSubmatch(m[2])
			if kind == nil {
				t.Fatalf("%s: no rindactl-<kind> tag in %q", source, line)
			}
			// cron's environment: its own few variables plus the crontab's.
			// systemd-cat needs a journal, so a stub that runs its command
			// stands in for it (first on PATH).
			out = append(out, unitCommand{name: source + " " + kind[1], kind: kind[1],
				argv: []string{shell, "-c", m[2]},
				env:  []string{"PATH=" + stubDir + ":" + path, "SHELL=" + shell, "HOME=" + stubDir, "LOGNAME=rindactl"}})
		}
	}
	return out
}

// systemdCommands parses the services of `schedule print --format systemd`
// (files start with their "# /etc/systemd/system/NAME" line): ExecStart= run
// with the variables EnvironmentFile= sets, as systemd reads that file.
func systemdCommands(t *testing.T, source string, files map[string]string) []unitCommand {
	t.Helper()
	var out []unitCommand
	for name, text := range files {
		if !strings.HasSuffix(name, ".service") {
			continue
		}
		var exec, envFile string
		for _, line := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
				exec = v
			}
			if v, ok := strings.CutPrefix(line, "EnvironmentFile="); ok {
				envFile = v
			}
		}
		fh, err := os.Open(envFile)
		if err != nil {
			t.Fatalf("%s %s: EnvironmentFile: %v", source, name, err)
		}
		vars, problems, err := schedule.ParseEnvFile(fh)
		fh.Close()
		if err != nil || len(problems) > 0 {
			t.Fatalf("%s %s: env file: %v %v", source, name, problems, err)
		}
		env := []string{"PATH=/usr/bin:/bin"}
		for _, kv := range vars {
			env = append(env, kv[0]+"="+kv[1])
		}
		kind := strings.TrimSuffix(strings.TrimPrefix(name, "rindactl-"), ".service")
		out = append(out, unitCommand{name: source + " " + name, kind: kind, argv: strings.Fields(exec), env: env})
	}
	return out
}

// splitSystemd splits the printed units at their "# /etc/systemd/system/" lines.
func splitSystemd(text string) map[string]string {
	files := map[string]string{}
	var name string
	for _, line := range strings.SplitAfter(text, "\n") {
		if v, ok := strings.CutPrefix(line, "# /etc/systemd/system/"); ok {
			name = strings.TrimSpace(v)
		}
		files[name] += line
	}
	return files
}

// kubernetesCommands parses each CronJob's container command and args; the
// image has rindactl on its PATH and the Secret provides the environment.
func kubernetesCommands(t *testing.T, source, text, binDir string, secret []string) []unitCommand {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(text))
	var out []unitCommand
	for {
		var job struct {
			Metadata struct{ Name string }
			Spec     struct {
				JobTemplate struct {
					Spec struct {
						Template struct {
							Spec struct {
								Containers []struct {
									Command []string
									Args    []string
								}
							}
						}
					}
				} `yaml:"jobTemplate"`
			}
		}
		if err := dec.Decode(&job); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("%s: %v", source, err)
		}
		c := job.Spec.JobTemplate.Spec.Template.Spec.Containers
		if len(c) != 1 || len(c[0].Command) == 0 {
			t.Fatalf("%s %s: want one container with a command, got %+v", source, job.Metadata.Name, c)
		}
		argv := append([]string{filepath.Join(binDir, c[0].Command[0])}, c[0].Command[1:]...)
		out = append(out, unitCommand{name: source + " " + job.Metadata.Name, kind: strings.TrimPrefix(job.Metadata.Name, "rindactl-"),
			argv: append(argv, c[0].Args...), env: append([]string{"PATH=" + binDir + ":/usr/bin:/bin"}, secret...)})
	}
	return out
}

// succeeded counts the kind's successful runs in tick_runs.
func succeeded(t *testing.T, db *storetest.DB, kind string) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM tick_runs WHERE kind = $1 AND exit_status = 0", kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue 16: every unit `schedule print` generates, in every format, and
// every file in deploy/, runs green against a real database: the exact
// command line the scheduler would execute, with the environment it would
// give it, loading DATABASE_URL from the env file `schedule env-file` wrote.
// Each run must exit 0 and record a successful run of its kind.
func TestEveryGeneratedUnitRuns(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	bin := buildRindactl(t)
	binDir := filepath.Dir(bin)
	dsn := hostileDSN(t, db)
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")

	// The provider keys an enrich tick needs to start; with no due lead it
	// calls no provider.
	keys := []string{"RINDA_HUNTER_API_KEY=hk-test", "RINDA_FINDYMAIL_API_KEY=fm-test"}
	write := exec.Command(bin, "schedule", "env-file", envFile)
	write.Env = append([]string{"DATABASE_URL=" + dsn}, keys...)
	if out, err := write.CombinedOutput(); err != nil || strings.Contains(string(out), "p&ss") {
		t.Fatalf("schedule env-file: %v\n%s", err, out)
	}
	stub := filepath.Join(dir, "stub")
	if err := os.Mkdir(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stub, "systemd-cat"), []byte("#!/bin/sh\n# systemd-cat -t NAME CMD...\nshift 2\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	print := func(format string) string {
		args := []string{"schedule", "print", "--format", format}
		if format != "kubernetes" { // the image runs rindactl from its PATH, with a Secret
			args = append(args, "--binary", bin, "--env-file", envFile)
		}
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("schedule print --format %s: %v\n%s", format, err, stderr.String())
		}
		return stdout.String()
	}
	deploy := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "deploy", name))
		if err != nil {
			t.Fatal(err)
		}
		// The shipped files name the default paths; point them at this test's.
		return strings.NewReplacer(schedule.BinaryDefault, bin, schedule.EnvFileDefault, envFile).Replace(string(data))
	}

	var units []unitCommand
	units = append(units, cronCommands(t, "crontab", print("crontab"), stub)...)
	units = append(units, systemdCommands(t, "systemd", splitSystemd(print("systemd")))...)
	secret := append([]string{"DATABASE_URL=" + dsn}, keys...)
	units = append(units, kubernetesCommands(t, "kubernetes", print("kubernetes"), binDir, secret)...)
	units = append(units, cronCommands(t, "deploy/crontab", deploy("crontab/rindactl.crontab"), stub)...)
	shipped := map[string]string{}
	for _, kind := range tickkind.All {
		name := "rindactl-" + string(kind) + ".service"
		shipped[name] = deploy("systemd/" + name)
	}
	units = append(units, systemdCommands(t, "deploy/systemd", shipped)...)
	units = append(units, kubernetesCommands(t, "deploy/kubernetes", deploy("kubernetes/rindactl-cronjobs.yaml"), binDir, secret)...)
	if want := 6 * len(tickkind.All); len(units) != want {
		t.Fatalf("parsed %d units, want %d (3 formats and deploy/, %d kinds)", len(units), want, len(tickkind.All))
	}

	for _, u := range units {
		before := succeeded(t, db, u.kind)
		cmd := exec.Command(u.argv[0], u.argv[1:]...)
		cmd.Env = u.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %q exited %v\n%s", u.name, u.argv, err, out)
			continue
		}
		if after := succeeded(t, db, u.kind); after != before+1 {
			t.Errorf("%s: %d new successful %s run(s) in tick_runs, want 1\n%s", u.name, after-before, u.kind, out)
		}
	}

	// rindactl run fires the same commands as its own children.
	var stderr testkit.Buffer
	run := exec.Command(bin, "run", "--enrich", "* * * * * *", "--email", "* * * * * *", "--events", "* * * * * *", "--inbox", "* * * * * *", "--prune", "* * * * * *")
	run.Env = append([]string{"DATABASE_URL=" + dsn, "PATH=/usr/bin:/bin"}, keys...)
	run.Stderr = &stderr
	before := map[string]int{}
	for _, kind := range tickkind.All {
		before[string(kind)] = succeeded(t, db, string(kind))
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Process.Kill() })
	testkit.Eventually(t, "rindactl run to record a successful run of every kind", func() bool {
		for _, kind := range tickkind.All {
			if succeeded(t, db, string(kind)) <= before[string(kind)] {
				return false
			}
		}
		return true
	})
	_ = run.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("rindactl run exited %v after SIGTERM, want 0", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("rindactl run did not exit within 60s of SIGTERM")
	}
	if strings.Contains(stderr.String(), `"tick failed"`) {
		t.Errorf("rindactl run logged a failed tick:\n%s", stderr.String())
	}
}
