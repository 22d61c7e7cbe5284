package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.yaml.in/yaml/v3"

	"github.com/rindactl/rindactl/internal/schedule"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
	"github.com/rindactl/rindactl/internal/tickkind"
	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// unitCommand is one generated unit's command, ready to run.
type unitCommand struct {
	name string   // where it came from: format and unit
	kind string   // the tick kind it runs (tick_runs.kind)
	argv []string // what the scheduler executes
	env  []string // the environment the scheduler gives it
}

// builtRindactl is the binary the units run, as an operator would: built
// once for the package (or make test's, testkit.BinaryEnv), in a
// directory of its own that TestMain removes.
var (
	builtRindactl = sync.OnceValues(func() (string, error) { return testkit.Rindactl(rindactlDir) })
	rindactlDir   string
)

func buildRindactl(t *testing.T) string {
	t.Helper()
	bin, err := builtRindactl()
	if err != nil {
		t.Fatal(err)
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
	descriptorJob := regexp.MustCompile(`^(@\S+\s+)(.+)$`)
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
			if strings.HasPrefix(line, "@") { // @hourly: one field
				m = descriptorJob.FindStringSubmatch(line)
			}
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
		// The unsubscribe server is no tick: TestGeneratedUnsubscribeUnitsServe runs it.
		if !strings.HasSuffix(name, ".service") || name == unsubscribeUnit+".service" {
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
			Kind     string
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
		if job.Kind != "CronJob" {
			continue // the unsubscribe server's Deployment and Service
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
	if err := os.WriteFile(filepath.Join(stub, "systemd-cat"), []byte("#!/bin/sh\n# systemd-cat [-t NAME] CMD...\n[ \"$1\" = -t ] && shift 2\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Where journald is absent, systemd-cat is installed but fails before
	// it runs anything (a container, a host with syslog only).
	noJournal := filepath.Join(dir, "nojournal")
	if err := os.Mkdir(noJournal, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noJournal, "systemd-cat"), []byte("#!/bin/sh\necho 'Failed to create stream fd: No such file or directory' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	print := func(format string, specs ...string) string {
		args := append([]string{"schedule", "print", "--format", format}, specs...)
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
	// Issue 27: crontab lines that 'exec systemd-cat' never started the
	// tick where journald is absent; they fall back to logger or plain output.
	units = append(units, cronCommands(t, "crontab without journald", print("crontab"), noJournal)...)
	// Issue 38: where neither journald nor syslog is there, cron mails a
	// line's output; an idle tick's run must print nothing (checked below).
	units = append(units, cronCommands(t, noSyslog, withoutSyslog(print("crontab")), noJournal)...)
	shipped := map[string]string{}
	for _, kind := range tickkind.All {
		name := "rindactl-" + string(kind) + ".service"
		shipped[name] = deploy("systemd/" + name)
	}
	units = append(units, systemdCommands(t, "deploy/systemd", shipped)...)
	units = append(units, kubernetesCommands(t, "deploy/kubernetes", deploy("kubernetes/rindactl-cronjobs.yaml"), binDir, secret)...)
	if want := 8 * len(tickkind.All); len(units) != want {
		t.Fatalf("parsed %d units, want %d (3 formats, crontab without journald, without syslog and deploy/, %d kinds)", len(units), want, len(tickkind.All))
	}

	// Issue 27: every schedule, not only every minute. A spec more than
	// about 5 minutes apart gives each tick a --max-duration its default
	// 5m lease cannot cover: the lease must grow with it (tick.FitLease),
	// or email and inbox ticks exit 2 on every firing. 'rindactl run' fires
	// the same Command() as its children, so these lines are its too.
	for _, spec := range []string{"*/1 * * * *", "*/5 * * * *", "*/6 * * * *", "*/10 * * * *", "@hourly", "0 9 * * 1-5", "CRON_TZ=Asia/Seoul 0 9 * * *"} {
		var specs []string
		for _, kind := range tickkind.All {
			specs = append(specs, "--"+string(kind), spec)
		}
		name := func(format string) string { return fmt.Sprintf("%s %q", format, spec) }
		if !strings.HasPrefix(spec, "CRON_TZ=") { // a crontab line cannot carry a zone
			units = append(units, cronCommands(t, name("crontab"), print("crontab", specs...), stub)...)
		}
		units = append(units, systemdCommands(t, name("systemd"), splitSystemd(print("systemd", specs...)))...)
		units = append(units, kubernetesCommands(t, name("kubernetes"), print("kubernetes", specs...), binDir, secret)...)
	}
	if want := (8 + 6*3 + 2) * len(tickkind.All); len(units) != want {
		t.Fatalf("parsed %d units with the schedules, want %d", len(units), want)
	}

	// One kind's units one after another (each is checked for its own
	// tick_runs row), the kinds side by side: ticks of different kinds
	// share nothing a unit's check counts. Units whose command line and
	// environment are byte-identical (a schedule that changes only the
	// timer, not the command) run once, named after all of them: running
	// the same process twice checks nothing more, and the suite's time
	// goes to subprocesses.
	byKind := map[string][]unitCommand{}
	first := map[string]int{}
	for _, u := range units {
		key := u.kind + "\x00" + strings.Join(u.argv, "\x00") + "\x01" + strings.Join(u.env, "\x00")
		if i, ok := first[key]; ok {
			byKind[u.kind][i].name += ", " + u.name
			continue
		}
		first[key] = len(byKind[u.kind])
		byKind[u.kind] = append(byKind[u.kind], u)
	}
	distinct := 0
	for _, us := range byKind {
		distinct += len(us)
	}
	t.Logf("%d units, %d distinct command lines", len(units), distinct)
	t.Run("units", func(t *testing.T) {
		for kind, us := range byKind {
			t.Run(kind, func(t *testing.T) {
				t.Parallel()
				for _, u := range us {
					before := succeeded(t, db, u.kind)
					cmd := exec.Command(u.argv[0], u.argv[1:]...)
					cmd.Env = u.env
					out, err := cmd.CombinedOutput()
					if err != nil {
						t.Errorf("%s: %q exited %v\n%s", u.name, u.argv, err, out)
						continue
					}
					if strings.HasPrefix(u.name, noSyslog) && len(out) != 0 {
						t.Errorf("%s: a successful run printed %d bytes, which cron would mail every firing:\n%s", u.name, len(out), out)
					}
					if after := succeeded(t, db, u.kind); after != before+1 {
						t.Errorf("%s: %d new successful %s run(s) in tick_runs, want 1\n%s", u.name, after-before, u.kind, out)
					}
				}
			})
		}
	})

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

// noSyslog names the crontab lines run as on a host with neither journald
// nor syslog, where cron mails whatever a line prints.
const noSyslog = "crontab without journald or syslog"

// withoutSyslog makes a crontab's lines see no /dev/log socket, as on a
// host without syslog, whatever this machine has.
func withoutSyslog(crontab string) string {
	const probe = "[ -S /dev/log ]"
	return strings.ReplaceAll(crontab, probe, "[ -S /nonexistent/dev/log ]")
}

// Issue 38: a crontab line on a host without journald or syslog prints a
// failed run's output (cron mails it) with the run's exit code, and
// nothing of a run that succeeded (TestEveryGeneratedUnitRuns).
func TestCrontabLineWithoutSyslogPrintsOnlyFailures(t *testing.T) {
	t.Parallel()
	bin := buildRindactl(t)
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	// Nothing listens there: the tick fails to connect and exits non-zero.
	bad := "postgres://rindactl@" + freeAddr(t) + "/rindactl?sslmode=disable&connect_timeout=2"
	if err := os.WriteFile(envFile, []byte("DATABASE_URL=\""+bad+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noJournal := filepath.Join(dir, "nojournal")
	if err := os.Mkdir(noJournal, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noJournal, "systemd-cat"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	print := exec.Command(bin, "schedule", "print", "--format", "crontab", "--binary", bin, "--env-file", envFile)
	print.Stdout, print.Stderr = &stdout, &stderr
	if err := print.Run(); err != nil {
		t.Fatalf("schedule print: %v\n%s", err, stderr.String())
	}
	units := cronCommands(t, noSyslog, withoutSyslog(stdout.String()), noJournal)
	if len(units) == 0 {
		t.Fatal("no crontab lines")
	}
	u := units[0]
	cmd := exec.Command(u.argv[0], u.argv[1:]...)
	cmd.Env = u.env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("%s: a run against a dead database exited %v, want a non-zero exit code passed through\n%s", u.name, err, out)
	}
	if !strings.Contains(string(out), "cannot connect to Postgres") {
		t.Errorf("%s: a failed run printed %q, want its error (cron mails it)", u.name, out)
	}
	if strings.Contains(string(out), "rindactl@") {
		t.Errorf("%s: the output names the database URL: %s", u.name, out)
	}
}

// unsubscribeUnit names the unsubscribe server's generated units.
const unsubscribeUnit = "rindactl-unsubscribe"

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Issue 25: the unsubscribe server's generated units run: the systemd
// .service under socket activation (systemd-socket-activate passes the
// socket the .socket unit describes, as systemd does), the Kubernetes
// Deployment's container command with the Secret's environment. Each
// answers its probe, honours a one-click POST against the real database,
// and exits 0 on SIGTERM.
func TestGeneratedUnsubscribeUnitsServe(t *testing.T) {
	t.Parallel()
	if schedule.UnsubscribeShutdownTimeout != unsubscribe.ShutdownTimeoutDefault {
		t.Fatalf("the units give the server %s to shut down, the server takes %s", schedule.UnsubscribeShutdownTimeout, unsubscribe.ShutdownTimeoutDefault)
	}
	ctx := context.Background()
	db := storetest.New(t)
	bin := buildRindactl(t)
	dsn := hostileDSN(t, db)
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	write := exec.Command(bin, "schedule", "env-file", envFile)
	write.Env = []string{"DATABASE_URL=" + dsn}
	if out, err := write.CombinedOutput(); err != nil {
		t.Fatalf("schedule env-file: %v\n%s", err, out)
	}
	// Two enrollments to unsubscribe, one per unit.
	var ws int64
	if err := db.Pool.QueryRow(ctx, `WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		c AS (INSERT INTO campaigns (workspace_id, name) SELECT id, 'q4' FROM w RETURNING id, workspace_id),
		l AS (INSERT INTO leads (workspace_id, first_name, email) SELECT w.id, 'L' || g, 'lead' || g || '@example.test' FROM w, generate_series(1, 2) g RETURNING id, workspace_id),
		e AS (INSERT INTO enrollments (campaign_id, lead_id, workspace_id) SELECT c.id, l.id, l.workspace_id FROM c, l RETURNING workspace_id)
		SELECT min(workspace_id) FROM e`).Scan(&ws); err != nil {
		t.Fatal(err)
	}
	key, err := store.UnsubscribeKey(ctx, db.Pool, ws)
	if err != nil {
		t.Fatal(err)
	}
	ids := storetest.Column[int64](t, db.Pool, `SELECT id FROM enrollments ORDER BY id`)

	print := func(format string) string {
		out, err := exec.Command(bin, "schedule", "print", "--format", format, "--binary", bin, "--env-file", envFile).Output()
		if format == "kubernetes" {
			out, err = exec.Command(bin, "schedule", "print", "--format", format).Output()
		}
		if err != nil {
			t.Fatalf("schedule print --format %s: %v", format, err)
		}
		return string(out)
	}
	units := splitSystemd(print("systemd"))
	socket, service := units[unsubscribeUnit+".socket"], units[unsubscribeUnit+".service"]
	if !strings.Contains(socket, "\nListenStream="+schedule.UnsubscribeListenDefault+"\n") || !strings.Contains(service, "\nRequires="+unsubscribeUnit+".socket\n") {
		t.Fatalf("systemd units:\n%s\n%s", socket, service)
	}
	var execStart []string
	var env []string
	for _, line := range strings.Split(service, "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			execStart = strings.Fields(v)
		}
	}
	fh, err := os.Open(envFile)
	if err != nil {
		t.Fatal(err)
	}
	vars, _, err := schedule.ParseEnvFile(fh)
	fh.Close()
	if err != nil || len(execStart) == 0 {
		t.Fatalf("ExecStart %q, env file %v", execStart, err)
	}
	for _, kv := range vars {
		env = append(env, kv[0]+"="+kv[1])
	}

	// systemd: the socket is bound before the server starts; the first
	// connection starts it.
	activate, err := exec.LookPath("systemd-socket-activate")
	if err != nil {
		t.Log("systemd-socket-activate is not installed (apt-get install systemd); the socket-activated unit is not run")
	} else {
		addr := freeAddr(t)
		argv := []string{"-l", addr}
		for _, kv := range env {
			argv = append(argv, "-E", kv)
		}
		serveUnit(t, "systemd", exec.Command(activate, append(append(argv, "--"), execStart...)...), []string{"PATH=/usr/bin:/bin"}, addr, unsubscribe.Sign(key, ids[0]))
	}

	// Kubernetes: the Deployment's container, its port swapped for a free one.
	dec := yaml.NewDecoder(strings.NewReader(print("kubernetes")))
	var args []string
	for {
		var doc struct {
			Kind string
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Command, Args []string
							Ports         []struct {
								ContainerPort int `yaml:"containerPort"`
							}
						}
					}
				}
			}
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind == "Deployment" {
			c := doc.Spec.Template.Spec.Containers[0]
			if c.Ports[0].ContainerPort != 8080 || !slices.Contains(c.Args, "--listen=:8080") {
				t.Fatalf("Deployment container: %+v", c)
			}
			args = c.Args
		}
	}
	if args == nil {
		t.Fatal("schedule print --format kubernetes wrote no Deployment")
	}
	addr := freeAddr(t)
	args[slices.Index(args, "--listen=:8080")] = "--listen=" + addr
	serveUnit(t, "kubernetes", exec.Command(bin, args...), append([]string{"PATH=/usr/bin:/bin"}, "DATABASE_URL="+dsn), addr, unsubscribe.Sign(key, ids[1]))

	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM enrollments WHERE status = 'unsubscribed'`).Scan(&n); err != nil || n != 2 {
		t.Errorf("%d enrollments unsubscribed through the units (%v), want 2", n, err)
	}
}

// serveUnit starts cmd, waits for addr to answer /healthz, posts a
// one-click unsubscribe with token, and stops the server with SIGTERM.
func serveUnit(t *testing.T, name string, cmd *exec.Cmd, env []string, addr, token string) {
	t.Helper()
	var stderr testkit.Buffer
	cmd.Env, cmd.Stderr = env, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	testkit.Eventually(t, name+" unsubscribe server to answer", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	resp, err := http.Post("http://"+addr+"/"+token, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("%s: one-click POST answered %d\n%s", name, resp.StatusCode, stderr.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: the server exited %v after SIGTERM, want 0\n%s", name, err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: the server did not exit within 60s of SIGTERM", name)
	}
	if strings.Contains(stderr.String(), "p&ss") {
		t.Errorf("%s: the server logged the database password:\n%s", name, stderr.String())
	}
}
