package schedule

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rindactl/rindactl/internal/tickkind"
)

func ticksOn(t *testing.T, specs map[tickkind.Kind]string) []Tick {
	t.Helper()
	var ticks []Tick
	for _, kind := range tickkind.All {
		if text, ok := specs[kind]; ok {
			ticks = append(ticks, Tick{Kind: kind, Spec: parseCase(t, text, false)})
		}
	}
	return ticks
}

func TestRenderRejectsWhatUnitsCannotCarry(t *testing.T) {
	t.Parallel()
	ticks := defaultTicks(t)
	tests := []struct {
		name   string
		format Format
		plan   Plan
		want   []string
	}{
		{"no ticks", FormatCrontab, Plan{}, []string{"no ticks"}},
		{"relative binary", FormatSystemd, Plan{Ticks: ticks, Binary: "bin/rindactl"}, []string{`binary "bin/rindactl"`, "absolute path"}},
		{"env file with a space", FormatCrontab, Plan{Ticks: ticks, EnvFile: "/etc/rinda ctl/env"}, []string{`env file "/etc/rinda ctl/env"`}},
		{"systemd specifier", FormatSystemd, Plan{Ticks: ticks, EnvFile: "/etc/%i/env"}, []string{"env file"}},
		{"bad user", FormatSystemd, Plan{Ticks: ticks, User: "Root User"}, []string{`user "Root User"`}},
		{"bad image", FormatKubernetes, Plan{Ticks: ticks, Image: "x y"}, []string{`image "x y"`}},
		{"bad secret", FormatKubernetes, Plan{Ticks: ticks, Secret: "Rinda_Env"}, []string{`secret "Rinda_Env"`}},
		{"days systemd cannot AND", FormatSystemd, Plan{Ticks: ticksOn(t, map[tickkind.Kind]string{tickkind.Email: "0 9 1 * 1"})},
			[]string{"email tick", `cron spec "0 9 1 * 1"`, "day-of-week"}},
		{"seconds in crontab", FormatCrontab, Plan{Ticks: []Tick{{Kind: tickkind.Events, Spec: parseCase(t, "*/30 * * * * *", true)}}},
			[]string{"events tick", "seconds field", "crontab"}},
		{"unknown format", Format("upstart"), Plan{Ticks: ticks}, []string{`format "upstart"`}},
	}
	for _, tt := range tests {
		_, err := Render(tt.format, tt.plan)
		if err == nil {
			t.Errorf("%s: Render succeeded, want an error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, w)
			}
		}
	}
}

func TestParseFormat(t *testing.T) {
	t.Parallel()
	for _, f := range Formats {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := ParseFormat("cron"); err == nil || !strings.Contains(err.Error(), "crontab, systemd or kubernetes") {
		t.Errorf("ParseFormat(cron) error = %v, want the choices", err)
	}
}

func renderOne(t *testing.T, format Format, plan Plan, name string) string {
	t.Helper()
	files, err := Render(format, plan)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name == name {
			return f.Content
		}
	}
	t.Fatalf("Render(%s) wrote no %s", format, name)
	return ""
}

func TestSystemdUnits(t *testing.T) {
	t.Parallel()
	plan := Plan{Ticks: ticksOn(t, map[tickkind.Kind]string{tickkind.Enrich: "*/5 * * * *", tickkind.Email: "* * * * *"}), User: "rindactl"}
	enrich := renderOne(t, FormatSystemd, plan, "rindactl-enrich.service")
	email := renderOne(t, FormatSystemd, plan, "rindactl-email.service")
	timer := renderOne(t, FormatSystemd, plan, "rindactl-enrich.timer")
	for _, want := range []string{
		"Type=oneshot", "ExecStart=/usr/local/bin/rindactl enrich tick --max-duration=290s",
		"EnvironmentFile=/etc/rindactl/env", "User=rindactl", "NoNewPrivileges=yes",
		"ProtectSystem=strict", "PrivateTmp=yes", "Nice=10", "CPUWeight=20", "TimeoutStartSec=320s",
	} {
		if !strings.Contains(enrich, want+"\n") {
			t.Errorf("enrich service lacks %q:\n%s", want, enrich)
		}
	}
	if strings.Contains(enrich, "DynamicUser") {
		t.Errorf("enrich service with a named user also sets DynamicUser:\n%s", enrich)
	}
	if strings.Contains(email, "Nice=") || strings.Contains(email, "CPUWeight=") {
		t.Errorf("email service lowers its own priority; only enrichment should:\n%s", email)
	}
	for _, want := range []string{"OnCalendar=*-*-* *:00/5:00", "AccuracySec=1s", "Persistent=true", "Unit=rindactl-enrich.service", "WantedBy=timers.target"} {
		if !strings.Contains(timer, want+"\n") {
			t.Errorf("enrich timer lacks %q:\n%s", want, timer)
		}
	}
	if _, err := Render(FormatSystemd, Plan{Ticks: plan.Ticks}); err != nil {
		t.Fatal(err)
	}
	if dyn := renderOne(t, FormatSystemd, Plan{Ticks: plan.Ticks}, "rindactl-email.service"); !strings.Contains(dyn, "DynamicUser=yes\n") {
		t.Errorf("service without a user lacks DynamicUser=yes:\n%s", dyn)
	}
}

// TestSystemdAnalyzeVerify loads the generated units into systemd's own
// checker. Unknown keys, bad calendar specs or a timer without its service
// all make it fail or print.
func TestSystemdAnalyzeVerify(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (apt-get install systemd); generated units unverified")
	}
	dir := t.TempDir()
	// verify checks that ExecStart and EnvironmentFile exist, so point them
	// at real files.
	binary := filepath.Join(dir, "rindactl")
	envFile := filepath.Join(dir, "env")
	if err := os.WriteFile(binary, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(envFile, []byte("DATABASE_URL=postgres://localhost/rinda\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plans := map[string]Plan{
		"dynamic":                            {Ticks: ticksOn(t, map[tickkind.Kind]string{tickkind.Enrich: "*/5 9-17 * * 1-5", tickkind.Email: "* * * * *", tickkind.Events: "0,30 * * * *"}), Binary: binary, EnvFile: envFile},
		"user":                               {Ticks: defaultTicks(t), Binary: binary, EnvFile: envFile, User: "rindactl", Unsubscribe: UnsubscribeListenDefault},
		"unsubscribe on all addresses, IPv6": {Ticks: defaultTicks(t), Binary: binary, EnvFile: envFile, Unsubscribe: "[::]:8443"},
	}
	for name, plan := range plans {
		files, err := Render(FormatSystemd, plan)
		if err != nil {
			t.Fatal(err)
		}
		unitDir := filepath.Join(dir, name)
		if err := os.Mkdir(unitDir, 0o755); err != nil {
			t.Fatal(err)
		}
		args := []string{"verify"}
		for _, f := range files {
			path := filepath.Join(unitDir, f.Name)
			if err := os.WriteFile(path, []byte(f.Content), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, path)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, analyze, args...)
		cmd.Dir = unitDir
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("%s: systemd-analyze verify: %v\n%s", name, err, out)
		}
	}
}

func TestCrontabLines(t *testing.T) {
	t.Parallel()
	ticks := ticksOn(t, map[tickkind.Kind]string{tickkind.Enrich: "*/2 * * * *", tickkind.Email: "* * * * *", tickkind.Events: "@hourly"})
	content := renderOne(t, FormatCrontab, Plan{Ticks: ticks, EnvFile: "/srv/rinda/env"}, "rindactl.crontab")
	var jobs []string
	for line := range strings.Lines(content) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "SHELL=") || strings.HasPrefix(line, "PATH=") {
			continue
		}
		jobs = append(jobs, line)
	}
	if len(jobs) != len(ticks) {
		t.Fatalf("crontab has %d job lines, want %d:\n%s", len(jobs), len(ticks), content)
	}
	for i, line := range jobs {
		tick := ticks[i]
		n := 5
		if strings.HasPrefix(line, "@") {
			n = 1
		}
		fields := strings.SplitN(line, " ", n+1)
		spec, command := strings.Join(fields[:n], " "), fields[n]
		if spec != tick.Spec.String() {
			t.Errorf("line %d schedules %q, want %q", i+1, spec, tick.Spec)
		}
		// Each way of logging (journal, syslog, cron's output) runs the
		// same tick.
		wantRun := "/usr/local/bin/rindactl " + strings.Join(tick.Command(), " ")
		// Without journal or syslog, cron mails the output: only a failed
		// run's, with its exit code (issue 38).
		plainly := wantRun + ` >"$o" 2>&1; rc=$?; [ "$rc" -eq 0 ] || cat "$o"; rm -f "$o"; exit "$rc"; fi`
		if strings.Count(command, wantRun) != 3 || !strings.HasSuffix(command, plainly) || !strings.Contains(command, ". /srv/rinda/env;") {
			t.Errorf("line %d command %q should load /srv/rinda/env and run %q through the journal, syslog or plainly", i+1, command, wantRun)
		}
		if strings.Contains(command, "%") {
			t.Errorf("line %d has a %% that cron turns into a newline: %q", i+1, command)
		}
		if out, err := exec.Command("sh", "-n", "-c", command).CombinedOutput(); err != nil {
			t.Errorf("line %d is not valid sh: %v\n%s", i+1, err, out)
		}
	}
}

func TestKubernetesCronJobs(t *testing.T) {
	t.Parallel()
	ticks := ticksOn(t, map[tickkind.Kind]string{tickkind.Enrich: "*/5 * * * *", tickkind.Email: "* * * * *", tickkind.Events: "* * * * *"})
	content := renderOne(t, FormatKubernetes, Plan{Ticks: ticks, Secret: "rinda-env", Image: "registry.example/rindactl:1.2.3"}, "rindactl-cronjobs.yaml")

	type container struct {
		Name    string   `yaml:"name"`
		Image   string   `yaml:"image"`
		Command []string `yaml:"command"`
		Args    []string `yaml:"args"`
		EnvFrom []struct {
			SecretRef struct {
				Name string `yaml:"name"`
			} `yaml:"secretRef"`
		} `yaml:"envFrom"`
		Resources struct {
			Requests map[string]string `yaml:"requests"`
		} `yaml:"resources"`
	}
	type cronJob struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Spec struct {
			Schedule          string `yaml:"schedule"`
			ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
			JobTemplate       struct {
				Spec struct {
					ActiveDeadlineSeconds int `yaml:"activeDeadlineSeconds"`
					Template              struct {
						Spec struct {
							RestartPolicy string      `yaml:"restartPolicy"`
							Containers    []container `yaml:"containers"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			} `yaml:"jobTemplate"`
		} `yaml:"spec"`
	}

	dec := yaml.NewDecoder(strings.NewReader(content))
	for i := 0; ; i++ {
		var node yaml.Node
		if err := dec.Decode(&node); errors.Is(err, io.EOF) {
			if i != len(ticks) {
				t.Fatalf("%d CronJobs, want %d", i, len(ticks))
			}
			break
		} else if err != nil {
			t.Fatalf("document %d is not YAML: %v", i+1, err)
		}
		if i >= len(ticks) {
			t.Fatalf("more CronJobs than ticks:\n%s", content)
		}
		tick := ticks[i]
		var cj cronJob
		if err := node.Decode(&cj); err != nil {
			t.Fatal(err)
		}
		if cj.Kind != "CronJob" || cj.Metadata.Name != "rindactl-"+string(tick.Kind) || cj.Spec.Schedule != tick.Spec.String() {
			t.Errorf("document %d: kind %q name %q schedule %q", i+1, cj.Kind, cj.Metadata.Name, cj.Spec.Schedule)
		}
		if cj.Spec.ConcurrencyPolicy != "Allow" {
			t.Errorf("%s: concurrencyPolicy %q, want Allow", tick.Kind, cj.Spec.ConcurrencyPolicy)
		}
		if c := commentBefore(&node, "concurrencyPolicy"); !strings.Contains(c, "SKIP LOCKED") || !strings.Contains(c, "lease") {
			t.Errorf("%s: concurrencyPolicy comment %q should explain SKIP LOCKED and leases", tick.Kind, c)
		}
		job := cj.Spec.JobTemplate.Spec
		wantDeadline := int((tick.MaxDuration() + ShutdownTimeoutDefault) / time.Second)
		if job.ActiveDeadlineSeconds != wantDeadline {
			t.Errorf("%s: activeDeadlineSeconds %d, want %d", tick.Kind, job.ActiveDeadlineSeconds, wantDeadline)
		}
		pod := job.Template.Spec
		if pod.RestartPolicy != "Never" || len(pod.Containers) != 1 {
			t.Fatalf("%s: restartPolicy %q with %d containers", tick.Kind, pod.RestartPolicy, len(pod.Containers))
		}
		c := pod.Containers[0]
		if c.Image != "registry.example/rindactl:1.2.3" || strings.Join(c.Args, " ") != strings.Join(tick.Command(), " ") {
			t.Errorf("%s: image %q args %q", tick.Kind, c.Image, c.Args)
		}
		if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != "rinda-env" {
			t.Errorf("%s: envFrom %+v, want the rinda-env Secret", tick.Kind, c.EnvFrom)
		}
		if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" {
			t.Errorf("%s: resource requests %v, want cpu and memory", tick.Kind, c.Resources.Requests)
		}
		if tick.Kind == tickkind.Enrich {
			if cpu, _ := strconv.Atoi(strings.TrimSuffix(c.Resources.Requests["cpu"], "m")); cpu >= 100 {
				t.Errorf("enrich requests %dm CPU; background work should ask for less than email", cpu)
			}
		}
	}
}

// commentBefore returns the head comment of key in the CronJob's spec.
func commentBefore(doc *yaml.Node, key string) string {
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "spec" {
			continue
		}
		spec := root.Content[i+1]
		for j := 0; j+1 < len(spec.Content); j += 2 {
			if spec.Content[j].Value == key {
				return spec.Content[j].HeadComment
			}
		}
	}
	return ""
}

// Issue 16: CronJobs run the image of the version that generated them.
func TestImageForVersion(t *testing.T) {
	t.Parallel()
	for version, want := range map[string]string{
		"v1.4.0":                 ImageRepo + ":v1.4.0",
		"1.4.0-rc.1":             ImageRepo + ":1.4.0-rc.1",
		"dev":                    ImageDefault,
		"dev-0123456789ab-dirty": ImageDefault,
		"":                       ImageDefault,
		"v1.4.0+meta":            ImageDefault, // + is not a valid tag character
		"3de1b5a-dirty":          ImageDefault, // git describe without a tag
	} {
		if got := ImageFor(version); got != want {
			t.Errorf("ImageFor(%q) = %q, want %q", version, got, want)
		}
	}
}

// Issue 16: a spec's zone reaches the CronJob as spec.timeZone (and its
// schedule carries no prefix); a crontab line cannot carry one.
func TestRenderTimeZone(t *testing.T) {
	t.Parallel()
	ticks := ticksOn(t, map[tickkind.Kind]string{tickkind.Email: "CRON_TZ=Asia/Seoul 0 9 * * 1-5"})
	files, err := Render(FormatKubernetes, Plan{Ticks: ticks})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Spec struct {
			Schedule string
			TimeZone string `yaml:"timeZone"`
		}
	}
	if err := yaml.Unmarshal([]byte(files[0].Content), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Spec.Schedule != "0 9 * * 1-5" || doc.Spec.TimeZone != "Asia/Seoul" {
		t.Errorf("CronJob schedule %q timeZone %q", doc.Spec.Schedule, doc.Spec.TimeZone)
	}
	plain, err := Render(FormatKubernetes, Plan{Ticks: defaultTicks(t)})
	if err != nil || strings.Contains(plain[0].Content, "timeZone") {
		t.Errorf("a spec without a zone got a timeZone (%v)", err)
	}
	if _, err := Render(FormatCrontab, Plan{Ticks: ticks}); err == nil || !strings.Contains(err.Error(), "time zone") {
		t.Errorf("crontab with a zone: %v, want it refused", err)
	}
}
