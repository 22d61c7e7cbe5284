package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchedulePrintDefaultsMatchDeployExamples checks that what the CLI
// prints with every default is exactly what deploy/ ships.
func TestSchedulePrintDefaultsMatchDeployExamples(t *testing.T) {
	t.Parallel()
	shipped := map[string][]string{
		"crontab":    {"crontab/rindactl.crontab"},
		"kubernetes": {"kubernetes/rindactl-cronjobs.yaml"},
		"systemd": {
			"systemd/rindactl-enrich.service", "systemd/rindactl-enrich.timer",
			"systemd/rindactl-email.service", "systemd/rindactl-email.timer",
			"systemd/rindactl-events.service", "systemd/rindactl-events.timer",
			"systemd/rindactl-inbox.service", "systemd/rindactl-inbox.timer",
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
		{[]string{"--format", "crontab", "--enrich", "off", "--email", "off", "--events", "off", "--inbox", "off"}, "every tick is off"},
		{[]string{"--format", "crontab", "extra"}, "takes 0 argument(s)"},
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
