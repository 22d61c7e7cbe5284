package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/schedule"
)

// TestSchedulePrintDefaultsMatchDeployExamples checks that what the CLI
// prints with every default is exactly what deploy/ ships.
func TestSchedulePrintDefaultsMatchDeployExamples(t *testing.T) {
	t.Parallel()
	shipped := map[string][]string{
		"crontab":    {"crontab/rindactl.crontab"},
		"kubernetes": {"kubernetes/rindactl-cronjobs.yaml", "kubernetes/rindactl-unsubscribe.yaml"},
		"systemd": {
			"systemd/rindactl-enrich.service", "systemd/rindactl-enrich.timer",
			"systemd/rindactl-email.service", "systemd/rindactl-email.timer",
			"systemd/rindactl-events.service", "systemd/rindactl-events.timer",
			"systemd/rindactl-inbox.service", "systemd/rindactl-inbox.timer",
			"systemd/rindactl-prune.service", "systemd/rindactl-prune.timer",
			"systemd/rindactl-unsubscribe.socket", "systemd/rindactl-unsubscribe.service",
		},
	}
	for format, files := range shipped {
		var want []string
		for _, name := range files {
			data, err := os.ReadFile(filepath.Join("..", "..", "deploy", name))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, string(data))
		}
		res := runCLI(t, nil, "schedule", "print", "--format", format)
		if res.code != 0 {
			t.Fatalf("%s: exit %d: %s", format, res.code, res.stderr)
		}
		if res.stdout != strings.Join(want, "\n") {
			t.Errorf("%s: output differs from deploy/%s (regenerate with go test ./internal/schedule -run TestDeployExamples -update):\n%s", format, format, res.stdout)
		}
	}
}

// Issue 27: the --image help tells the truth about its default. It said
// "default: this binary's version" while a development build (every test
// binary) defaults to :latest; the default shown and the image printed
// must agree with the words.
func TestSchedulePrintImageHelpMatchesDefault(t *testing.T) {
	t.Parallel()
	res := runCLI(t, nil, "schedule", "print", "--help")
	var line string
	for _, l := range strings.Split(res.stdout, "\n") {
		if strings.Contains(l, "--image") {
			line = l
		}
	}
	def := schedule.ImageFor(buildVersion())
	if !strings.Contains(line, `(default "`+def+`")`) {
		t.Fatalf("--image help %q does not show the default %s", line, def)
	}
	if def == schedule.ImageDefault && !strings.Contains(line, "a development build to "+schedule.ImageDefault) {
		t.Errorf("--image help %q: this development build defaults to %s, and the help must say so", line, def)
	}
	if strings.Contains(line, "default: this binary's version") {
		t.Errorf("--image help %q claims the binary's version unconditionally", line)
	}
	out := runCLI(t, nil, "schedule", "print", "--format", "kubernetes")
	if !strings.Contains(out.stdout, "image: "+def+"\n") {
		t.Errorf("kubernetes units do not use the default %s the help shows", def)
	}
}

func TestSchedulePrintRejectsBadInputWithExit2(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--format", "crontab", "--enrich", "61 * * * *"}, `--enrich: cron spec "61 * * * *": minute field: "61": end of range (61) above maximum (59)`},
		{[]string{"--format", "kubernetes", "--events", "* * * *"}, `--events: cron spec "* * * *": expected 5 fields`},
		{[]string{"--format", "crontab", "--email", "*/10 * * * * *"}, `--email: cron spec "*/10 * * * * *": expected 5 fields`},
		{[]string{"--format", "systemd", "--email", "0 9 1 * 1"}, `email tick: cron spec "0 9 1 * 1": day-of-week field`},
		{[]string{"--format", "cron"}, `--format "cron": use crontab, systemd or kubernetes`},
		{[]string{}, "--format is required"},
		{[]string{"--format", "systemd", "--env-file", "env"}, `env file "env"`},
		{[]string{"--format", "crontab", "--enrich", "off", "--email", "off", "--events", "off", "--inbox", "off", "--prune", "off"}, "every tick is off"},
		{[]string{"--format", "crontab", "extra"}, "takes 0 argument(s)"},
		{[]string{"--format", "crontab", "--unsubscribe", "127.0.0.1:8080"}, "--unsubscribe does not apply to --format crontab"},
		{[]string{"--format", "systemd", "--unsubscribe", "8080"}, `unsubscribe listen address "8080": use host:port`},
	}
	for _, tt := range tests {
		res := runCLI(t, nil, append([]string{"schedule", "print"}, tt.args...)...)
		if res.code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tt.args, res.code, res.stderr)
		}
		if !strings.Contains(res.stderr, tt.want) {
			t.Errorf("%v: stderr %q does not contain %q", tt.args, res.stderr, tt.want)
		}
		if res.stdout != "" {
			t.Errorf("%v: printed units despite the error:\n%s", tt.args, res.stdout)
		}
	}
}

func TestSchedulePrintFlags(t *testing.T) {
	t.Parallel()
	res := runCLI(t, nil, "schedule", "print", "--format", "systemd", "--enrich", "*/5 9-17 * * 1-5",
		"--events", "off", "--inbox", "*/5 * * * *", "--env-file", "/srv/rinda/env", "--binary", "/opt/rinda/rindactl", "--user", "rinda")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{
		"OnCalendar=Mon..Fri *-*-* 09..17:00/5:00\n",
		"ExecStart=/opt/rinda/rindactl enrich tick --max-duration=290s\n",
		"ExecStart=/opt/rinda/rindactl inbox tick --max-duration=290s\n",
		"EnvironmentFile=/srv/rinda/env\n",
		"User=rinda\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(res.stdout, "rindactl-events") {
		t.Errorf("--events off still printed the events units")
	}
}

// Issue 16: a flag the chosen format does not use is rejected (exit 2),
// not silently ignored.
func TestSchedulePrintRejectsFlagsOfOtherFormats(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--format", "kubernetes", "--user", "rindactl"},
		{"--format", "kubernetes", "--env-file", "/etc/rindactl/env"},
		{"--format", "crontab", "--image", "registry.example/rindactl:1.0.0"},
		{"--format", "crontab", "--user", "rindactl"},
		{"--format", "systemd", "--image", "registry.example/rindactl:1.0.0"},
	} {
		res := runCLI(t, nil, append([]string{"schedule", "print"}, args...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, "does not apply to --format") {
			t.Errorf("%v: exit %d %q, want 2 naming the flag", args, res.code, res.stderr)
		}
	}
	if res := runCLI(t, nil, "schedule", "print", "--format", "systemd", "--user", "rindactl"); res.code != 0 {
		t.Errorf("--user with systemd: exit %d %s", res.code, res.stderr)
	}
}

// Issue 16: `schedule env-file` writes the variables quoted for sh and
// systemd alike, readable by its owner only, and prints names, never values.
func TestScheduleEnvFileWritesBothParsersFormat(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "env")
	env := map[string]string{"DATABASE_URL": `postgres://u:p&w$x@h/db?a=1&b=2`, "SMTP_PW": `it's "x" $y`}
	res := runCLI(t, env, "schedule", "env-file", path, "--var", "SMTP_PW")
	if res.code != 0 || !strings.Contains(res.stdout, "DATABASE_URL, SMTP_PW") || strings.Contains(res.stdout+res.stderr, "p&w") {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("env file mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	vars, problems, err := schedule.ParseEnvFile(fh)
	if err != nil || len(problems) > 0 || len(vars) != 2 || vars[0] != [2]string{"DATABASE_URL", env["DATABASE_URL"]} || vars[1] != [2]string{"SMTP_PW", env["SMTP_PW"]} {
		t.Fatalf("read back %q, problems %v (%v)", vars, problems, err)
	}
	if res := runCLI(t, env, "schedule", "env-file", path, "--var", "NOT_SET_HERE"); res.code != exitUsage {
		t.Errorf("--var of an unset variable: exit %d, want 2", res.code)
	}
}

// Issue 30: one unit set per cell, each loading its own env file (or
// Secret) that holds its DATABASE_URL; the URLs, and their passwords,
// are never printed.
func TestSchedulePrintOneUnitSetPerCell(t *testing.T) {
	t.Parallel()
	urls := "eu-1=postgres://rinda:Sup3r-S3cret@eu.db.internal/rinda,postgres://rinda:0ther-S3cret@us.db.internal:5433/rinda_us"
	for format, want := range map[string][]string{
		"crontab": {". /etc/rindactl/eu-1.env;", "-t rindactl-eu-1-email ", ". /etc/rindactl/rinda-us.env;", "-t rindactl-rinda-us-prune "},
		"systemd": {"# /etc/systemd/system/rindactl-eu-1-enrich.service\n", "EnvironmentFile=/etc/rindactl/rinda-us.env\n",
			"Unit=rindactl-rinda-us-email.service\n", "Description=rindactl prune (cell eu-1)\n"},
		"kubernetes": {"name: rindactl-eu-1-inbox\n", "name: rindactl-rinda-us-events\n", "app.kubernetes.io/instance: eu-1\n",
			"name: rindactl-rinda-us\n"},
	} {
		res := runCLI(t, nil, "schedule", "print", "--format", format, "--database-urls", urls)
		if res.code != 0 {
			t.Fatalf("%s: exit %d: %s", format, res.code, res.stderr)
		}
		for _, w := range want {
			if !strings.Contains(res.stdout, w) {
				t.Errorf("%s: output lacks %q", format, w)
			}
		}
		for _, secret := range []string{"S3cret", "db.internal", "postgres://"} {
			if strings.Contains(res.stdout, secret) {
				t.Errorf("%s: the units print %q from a database URL", format, secret)
			}
		}
		n := 0 // units: a crontab line names its command more than once
		for _, line := range strings.Split(res.stdout, "\n") {
			if !strings.HasPrefix(line, "#") && (strings.Contains(line, "enrich tick --max-duration") || strings.Contains(line, `"enrich", "tick"`)) {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%s: %d enrich units, want one per cell", format, n)
		}
	}
	for _, tt := range []struct{ urls, want string }{
		{"postgres://a/rinda,postgres://b/rinda", `two cells named "rinda": name them NAME=URL`},
		{"host=a dbname=rinda", "a key=value connection string cannot name its cell"},
		{"postgres://a/rinda?sslmode=disable", ""},
		{"EU=postgres://a/rinda", `cell "EU": use a name of lowercase letters`},
		{"postgres://a", "names no database"},
	} {
		res := runCLI(t, nil, "schedule", "print", "--format", "crontab", "--database-urls", tt.urls)
		if tt.want == "" {
			if res.code != 0 || !strings.Contains(res.stdout, "rindactl-rinda-email") {
				t.Errorf("--database-urls %q: exit %d, want units of cell rinda: %s", tt.urls, res.code, res.stderr)
			}
			continue
		}
		if res.code != exitUsage || !strings.Contains(res.stderr, tt.want) || res.stdout != "" {
			t.Errorf("--database-urls %q: exit %d, stderr %q; want 2 and %q", tt.urls, res.code, res.stderr, tt.want)
		}
	}
}

func TestSchedulePrintUnsubscribeOff(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"systemd", "kubernetes"} {
		res := runCLI(t, nil, "schedule", "print", "--format", format, "--unsubscribe", "off")
		if res.code != 0 || strings.Contains(res.stdout, "rindactl-unsubscribe") || !strings.Contains(res.stdout, "rindactl-email") {
			t.Errorf("%s --unsubscribe off: exit %d, unsubscribe units printed: %v", format, res.code, strings.Contains(res.stdout, "rindactl-unsubscribe"))
		}
	}
}
