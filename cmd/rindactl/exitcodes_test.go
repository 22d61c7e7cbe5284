package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// exitCodeColumns are the error classes of the README's exit-code table,
// in its column order after the command.
var exitCodeColumns = []string{"unknown flag", "no subcommand", "no `DATABASE_URL`", "invalid `DATABASE_URL`", "database unreachable", "bad input"}

// readmeExitCodes parses the README's per-command exit-code table: command
// path -> class -> code (absent when the cell is "—").
func readmeExitCodes(t *testing.T) map[string]map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Exit codes\n")
	if !ok {
		t.Fatal("README.md has no '## Exit codes' section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	table := map[string]map[string]int{}
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| command |") {
			cells := splitRow(line)
			if !slices.Equal(cells[1:1+len(exitCodeColumns)], exitCodeColumns) {
				t.Fatalf("README exit-code table columns %q, want %q", cells, exitCodeColumns)
			}
			inTable = true
			continue
		}
		if !inTable || strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := splitRow(line)
		path := strings.Trim(cells[0], "`")
		row := map[string]int{}
		for i, class := range exitCodeColumns {
			cell := cells[1+i]
			if cell == "—" {
				continue
			}
			code, err := strconv.Atoi(cell)
			if err != nil {
				t.Fatalf("README exit-code table, %s / %s: %q is not a code or —", path, class, cell)
			}
			row[class] = code
		}
		table[path] = row
	}
	if len(table) == 0 {
		t.Fatal("README.md has no per-command exit-code table")
	}
	return table
}

func splitRow(line string) []string {
	cells := strings.Split(strings.Trim(line, "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// commandPaths lists every command path of the CLI ("rindactl", "import
// leads", ...), leaving out cobra's own help and completion.
func commandPaths(c *cobra.Command, prefix string) []string {
	var out []string
	for _, sub := range c.Commands() {
		if sub.Name() == "help" || sub.Name() == "completion" {
			continue
		}
		path := strings.TrimSpace(prefix + " " + sub.Name())
		out = append(out, path)
		out = append(out, commandPaths(sub, path)...)
	}
	return out
}

// Issue 16: the README's table of every command's exit code per error
// class is checked by running each cell.
func TestExitCodeTable(t *testing.T) {
	t.Parallel()
	table := readmeExitCodes(t)
	ios, _, _, _ := cliio.Test()
	root := newCmdRoot(newFactory(ios, os.Getenv))
	paths := append([]string{"rindactl"}, commandPaths(root, "")...)
	for _, p := range paths {
		if _, ok := table[p]; !ok {
			t.Errorf("README exit-code table has no row for %q", p)
		}
	}
	for p := range table {
		if !slices.Contains(paths, p) {
			t.Errorf("README exit-code table lists %q, which is not a command", p)
		}
	}

	db := storetest.New(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	goodCSV := write("leads.csv", "first_name,last_name,company_domain\nAda,Lovelace,analytical.example\n")
	badCSV := write("bad.csv", "first_name,last_name,company_domain,phone\nAda,Lovelace,analytical.example,1\n")
	badYAML := write("bad.yaml", "workspace: [acme\n")
	goodSuppressions := write("suppressions.csv", "email,reason\nada@analytical.example,unsubscribed\n")
	badSuppressions := write("bad-suppressions.csv", "email\nnot-an-address\n")
	token := unsubscribe.Sign(make([]byte, unsubscribe.KeySize), 1)
	envFile := filepath.Join(dir, "env")

	// Per command: arguments that would work given a database, and
	// arguments that are bad input (run against a real database when the
	// input can only be judged there).
	masterKey, nextKey := "ZXhpdC1jb2RlLXRhYmxlLW1hc3Rlci1rZXktMDAwMDE=", "ZXhpdC1jb2RlLXRhYmxlLW5ldy1tYXN0ZXIta2V5LTA="
	cases := map[string]struct {
		ok, bad []string
		// env is added to every environment the row runs in.
		env map[string]string
	}{
		"migrate": {ok: nil, bad: []string{"sideways"}},
		// No env file here (the default path is absent): doctor checks its
		// own DATABASE_URL, as the units would get it.
		"doctor":            {ok: nil, bad: []string{"--interval", "0s"}, env: map[string]string{"RINDA_HUNTER_API_KEY": "hk-test"}},
		"import leads":      {ok: []string{"--workspace", "acme", goodCSV}, bad: []string{"--workspace", "acme", badCSV}},
		"import campaign":   {ok: []string{filepath.Join("..", "..", "examples", "campaign.yaml")}, bad: []string{badYAML}},
		"enroll":            {ok: []string{"--workspace", "acme", "--campaign", "q4-outreach", "--all-leads"}, bad: []string{"--workspace", "nosuch", "--campaign", "q4-outreach", "--all-leads"}},
		"enrollment mark":   {ok: []string{"--replied", "1"}, bad: []string{"--replied", "abc"}},
		"enrich tick":       {ok: []string{"--nice", "0"}, bad: []string{"--providers", "nosuch"}},
		"email tick":        {ok: nil, bad: []string{"--batch", "0"}},
		"inbox tick":        {ok: nil, bad: []string{"--batch", "0"}},
		"status":            {ok: nil, bad: []string{"--output", "yaml"}},
		"requeue":           {ok: []string{"--status=unreachable", "--dry-run"}, bad: []string{"--status=bogus"}},
		"why lead":          {ok: []string{"1"}, bad: []string{"crm-999"}},
		"why enrollment":    {ok: []string{"1"}, bad: []string{"abc"}},
		"why mailbox":       {ok: []string{"sdr01@acme.test"}, bad: []string{"nobody@acme.test"}},
		"mailbox list":      {ok: nil, bad: []string{"--workspace", "nosuch"}},
		"mailbox pause":     {ok: []string{"sdr01@acme.test", "--for", "1h"}, bad: []string{"sdr01@acme.test"}},
		"mailbox resume":    {ok: []string{"sdr01@acme.test"}, bad: []string{"nobody@acme.test"}},
		"mailbox authorize": {ok: []string{"sdr01@acme.test"}, bad: []string{"nobody@acme.test"}, env: map[string]string{"RINDA_SECRET_KEY": masterKey}},
		"mailbox test":      {ok: []string{"sdr01@acme.test"}, bad: []string{"nobody@acme.test"}},
		"breaker list":      {ok: nil, bad: []string{"--output", "yaml"}},
		"breaker reset":     {ok: []string{"--workspace", "acme", "--provider", "hunter"}, bad: []string{"--workspace", "nosuch", "--provider", "hunter"}},
		"breaker open":      {ok: []string{"--workspace", "acme", "--provider", "hunter", "--for", "1h"}, bad: []string{"--workspace", "acme", "--provider", "hunter"}},
		"workspace list":    {ok: nil, bad: []string{"--output", "yaml"}},
		"workspace set":     {ok: []string{"acme", "--monthly-usd-ceiling", "10"}, bad: []string{"acme", "--monthly-usd-ceiling", "lots"}},
		"workspace set-key": {ok: []string{"--workspace", "acme", "--provider", "hunter", "--remove"}, bad: []string{"--workspace", "acme", "--provider", "nosuch"}},
		"providers":         {ok: []string{"--no-refresh"}, bad: []string{"--output", "yaml"}},
		"secrets rotate": {ok: nil, bad: []string{"--new-key-file", filepath.Join(dir, "none")},
			env: map[string]string{"RINDA_SECRET_KEY": masterKey, "RINDA_SECRET_KEY_NEW": nextKey}},
		"events list":         {ok: nil, bad: []string{"--limit", "0"}},
		"events deliver":      {ok: nil, bad: []string{"--max-duration", "0s"}},
		"prune":               {ok: []string{"--nice", "0"}, bad: []string{"--keep", "sends=7d"}},
		"schedule print":      {ok: []string{"--format", "crontab"}, bad: []string{"--format", "crontab", "--enrich", "61 * * * *"}},
		"schedule env-file":   {ok: []string{envFile}, bad: []string{envFile, "--var", "RINDA_TEST_UNSET_VARIABLE"}},
		"run":                 {ok: []string{"--enrich", "off", "--email", "off", "--events", "@yearly"}, bad: []string{"--enrich", "61 * * * *"}},
		"demo":                {ok: nil, bad: []string{"--rounds", "0"}},
		"bench claim":         {ok: []string{"--max-load", "0", "--rows", "10"}, bad: nil},
		"bench email":         {ok: []string{"--max-load", "0", "--steps", "10"}, bad: []string{"--smtp-delay", "soon"}},
		"bench history":       {ok: []string{"--max-load", "0", "--sequences", "10", "--calls", "10", "--events", "10", "--tick-runs", "10", "--steps", "5", "--leads", "5", "--pairs", "1"}, bad: []string{"--pairs", "0"}},
		"bench width":         {ok: []string{"--max-load", "0", "--widths", "1", "--window", "1s", "--steps", "10", "--leads", "10", "--mailboxes", "2"}, bad: []string{"--widths", "0"}},
		"bench storm":         {ok: []string{"--max-load", "0", "--leads", "10", "--duration", "1s"}, bad: []string{"--leads", "0"}},
		"bench incident":      {ok: []string{"--max-load", "0", "--pairs", "1", "--steps", "10"}, bad: []string{"--pairs", "0"}},
		"unsubscribe serve":   {ok: []string{"--listen", "127.0.0.1:0"}, bad: []string{"--listen", "nohost"}},
		"unsubscribe apply":   {ok: []string{token}, bad: []string{"nope"}},
		"suppressions import": {ok: []string{"--workspace", "acme", goodSuppressions}, bad: []string{"--workspace", "acme", badSuppressions}},
		"suppressions export": {ok: []string{"--workspace", "acme"}, bad: []string{"--workspace", "nosuch"}},
		"lead forget":         {ok: []string{"--email", "ada@analytical.example", "--yes"}, bad: []string{"--email", "nope", "--yes"}},
	}

	for path, row := range table {
		argv := strings.Fields(path)
		if path == "rindactl" {
			argv = nil
		}
		c := cases[path]
		envs := map[string]map[string]string{
			"no `DATABASE_URL`":      {},
			"invalid `DATABASE_URL`": {"DATABASE_URL": "postgres://rinda@db.internal:notaport/rinda"},
			"database unreachable":   {"DATABASE_URL": "postgres://rinda@127.0.0.1:1/rinda"},
		}
		for class, want := range row {
			var args []string
			env := map[string]string{"DATABASE_URL": db.URL}
			switch class {
			case "unknown flag":
				args = append(slices.Clone(argv), "--no-such-flag")
			case "no subcommand":
				args = argv
			case "bad input":
				if c.bad == nil && path == "bench claim" {
					args = argv // no --rows
				} else {
					args = append(slices.Clone(argv), c.bad...)
				}
			default:
				args = append(slices.Clone(argv), c.ok...)
				env = envs[class]
			}
			for k, v := range c.env {
				if env == nil {
					env = map[string]string{}
				}
				env[k] = v
			}
			if _, known := cases[path]; !known && class != "unknown flag" && class != "no subcommand" {
				t.Errorf("%s: no test case for %s", path, class)
				continue
			}
			res := runCLI(t, env, args...)
			if res.code != want {
				t.Errorf("%s / %s: rindactl %q exited %d, README says %d\n%s", path, class, args, res.code, want, res.stderr)
			}
			// demo and bench: rindabench's error line (bench.go).
			if want != 0 && !strings.Contains(res.stderr, "rindactl") && !strings.Contains(res.stderr, "rindabench") && !strings.Contains(res.stderr, "problem") {
				t.Errorf("%s / %s: exit %d without an error line on stderr", path, class, res.code)
			}
		}
	}
}
