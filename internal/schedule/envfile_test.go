package schedule

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nastyValues are values an env file must carry unchanged: the issue's &
// (sh backgrounds the assignment), $ (sh expands it), spaces, both quotes,
// backslashes and backticks.
var nastyValues = map[string]string{
	"DATABASE_URL":     `postgres://rinda:p@ss@db.internal:5432/rinda?sslmode=require&application_name=rindactl`,
	"DSN":              `host=db port=5432 user='rinda &$HOME "q\'t' password='a&b$c d"e\'f'`,
	"RINDA_HUNTER_KEY": "k`id`\\n$(reboot)\\\\ ;|<>*?~#!",
	"EMPTY":            "",
	"PLAIN":            "abc",
}

// Issue 16: one env-file format that `sh` (the crontab lines) and systemd's
// EnvironmentFile= read the same way: what EnvLine writes, sh sources back
// byte for byte, and ParseEnvFile (systemd's documented rules) agrees.
func TestEnvLineReadBackBySh(t *testing.T) {
	t.Parallel()
	keys := []string{"DATABASE_URL", "DSN", "RINDA_HUNTER_KEY", "EMPTY", "PLAIN"}
	var file strings.Builder
	file.WriteString("# rindactl environment\n\n")
	for _, k := range keys {
		line, err := EnvLine(k, nastyValues[k])
		if err != nil {
			t.Fatal(err)
		}
		file.WriteString(line + "\n")
	}
	path := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	script := `set -a; . "$0"; set +a`
	for _, k := range keys {
		script += `; printf '%s\0' "$` + k + `"`
	}
	out, err := exec.Command("/bin/sh", "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("sh could not source the file: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i, k := range keys {
		if i >= len(got) || got[i] != nastyValues[k] {
			t.Errorf("sh read %s as %q, want %q", k, got[min(i, len(got)-1)], nastyValues[k])
		}
	}

	vars, problems, err := ParseEnvFile(strings.NewReader(file.String()))
	if err != nil || len(problems) > 0 {
		t.Fatalf("ParseEnvFile rejected what EnvLine wrote: %v %v", problems, err)
	}
	for i, k := range keys {
		if vars[i] != [2]string{k, nastyValues[k]} {
			t.Errorf("ParseEnvFile read %q, want %s=%q", vars[i], k, nastyValues[k])
		}
	}
}

func TestEnvLineRejectsWhatNoLineCarries(t *testing.T) {
	t.Parallel()
	for _, tc := range [][2]string{{"BAD KEY", "x"}, {"1X", "x"}, {"K", "a\nb"}, {"K", "a\x00"}} {
		if _, err := EnvLine(tc[0], tc[1]); err == nil {
			t.Errorf("EnvLine(%q, %q) accepted", tc[0], tc[1])
		}
	}
}

// Lines sh and systemd read differently are rejected with their line
// number, never with their value (env files hold secrets).
func TestParseEnvFileRejectsAmbiguousLines(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t"
	cases := map[string]string{
		"DATABASE_URL=postgres://u:" + secret + "@h/db?sslmode=disable&x=1": "unquoted value",
		"K=" + secret + " two":      "unquoted value",
		"export K=" + secret:        "drop 'export '",
		`K="` + secret + `$HOME"`:   "unescaped $",
		`K="` + secret + `" # note`: "after the closing quote",
		`K='` + secret + `'x`:       "after the closing quote",
		`K="` + secret:              "not closed",
		"K=" + secret + "\r":        "carriage return",
		"not a variable " + secret:  "no '='",
		"MY KEY=" + secret:          "not a variable name",
	}
	for line, want := range cases {
		_, problems, err := ParseEnvFile(strings.NewReader("# ok\nGOOD=1\n" + line + "\n"))
		if err != nil || len(problems) != 1 {
			t.Errorf("%q: %d problems (%v), want 1", line, len(problems), err)
			continue
		}
		msg := problems[0].Error()
		if !strings.HasPrefix(msg, "line 3: ") || !strings.Contains(msg, want) || strings.Contains(msg, secret) {
			t.Errorf("%q: problem %q, want line 3, %q and no value", line, msg, want)
		}
	}
	vars, problems, _ := ParseEnvFile(strings.NewReader("A='it is $x'\nB=postgres://u@h:5432/db?sslmode=disable\n  # indented comment\n"))
	if len(problems) > 0 || len(vars) != 2 || vars[0][1] != "it is $x" {
		t.Errorf("valid lines: %v %v", vars, problems)
	}
}

// The value after '=' on its own: what sh and systemd both read, or why
// they would not.
func TestEnvValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, value, reason string
	}{
		{`plain`, "plain", ""},
		{`postgres://u@h:5432/db?sslmode=require`, "postgres://u@h:5432/db?sslmode=require", ""},
		{``, "", ""},
		{`"with space"`, "with space", ""},
		{"\"esc \\\" \\\\ \\$ \\`\"", "esc \" \\ $ `", ""},
		{`"keeps \n"`, `keeps \n`, ""},
		{`"x"  `, "x", ""},
		{`"x" y`, "", "text after the closing quote"},
		{`"$HOME"`, "", "an unescaped $ or `"},
		{`"open`, "", "the double quote is not closed"},
		{`'single $x'`, "single $x", ""},
		{`'open`, "", "the single quote is not closed"},
		{`'x'y`, "", "text after the closing quote"},
		{`a b`, "", "an unquoted value with spaces"},
		{`a;b`, "", "an unquoted value with spaces"},
	} {
		value, reason := envValue(tc.raw)
		if value != tc.value || !strings.HasPrefix(reason, tc.reason) || (tc.reason == "") != (reason == "") {
			t.Errorf("envValue(%s) = %q, %q; want %q, %q...", tc.raw, value, reason, tc.value, tc.reason)
		}
	}
}
