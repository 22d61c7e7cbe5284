package reliability

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/events"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/redact/redacttest"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// secretScenario is a workspace whose every credential is distinctive, so a
// leak anywhere is a substring match.
type secretScenario struct {
	db       *storetest.DB
	set      *providertest.Set
	smtp     *smtptest.Server
	echo     *smtptest.Raw // answers AUTH with a 535 repeating the password
	slack    *slackSink
	dbURL    string
	env      map[string]string
	secrets  map[string]string // what -> value
	commands int
}

// slackSink is a Slack incoming webhook that records what it was sent.
type slackSink struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func (s *slackSink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.bodies, "\n")
}

func newSecretScenario(t *testing.T) *secretScenario {
	t.Helper()
	sc := &secretScenario{db: storetest.New(t), set: providertest.StartAll(), secrets: map[string]string{}}
	t.Cleanup(sc.set.Close)
	for _, what := range []string{"hunter key", "findymail key", "millionverifier key", "smtp password", "wrong smtp password", "db password", "slack token",
		"workspace hunter key"} {
		sc.secrets[what] = strings.ReplaceAll(what, " ", "") + rand.Text()
	}
	// Keys and passwords with /+= are where URL-encoding and base64 differ
	// from the literal (issue 25).
	for _, what := range []string{"hunter key", "millionverifier key"} {
		sc.secrets[what] = strings.ReplaceAll(what, " ", "") + "/" + rand.Text()[:12] + "+" + rand.Text()[:8] + "=="
	}
	sc.secrets["echoed smtp password"] = "echo/" + rand.Text() + "+pw="
	// Master keys are 32 random bytes in base64 (issue 24).
	for _, what := range []string{"master key", "new master key"} {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		sc.secrets[what] = base64.StdEncoding.EncodeToString(b)
	}

	// A role with a password: the throwaway cluster trusts loopback, so any
	// password is accepted, but the URL still carries it everywhere.
	role := "rel_" + strings.ToLower(rand.Text()[:10])
	sqlExec(t, sc.db, "CREATE ROLE "+pgx.Identifier{role}.Sanitize()+" LOGIN SUPERUSER PASSWORD '"+sc.secrets["db password"]+"'")
	// Roles outlive databases: drop it (t.Context is over by cleanup time).
	t.Cleanup(func() {
		_, _ = sc.db.Pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+pgx.Identifier{role}.Sanitize())
	})
	u, err := url.Parse(sc.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, sc.secrets["db password"])
	sc.dbURL = u.String()

	sc.slack = &slackSink{}
	sc.slack.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sc.slack.mu.Lock()
		sc.slack.bodies = append(sc.slack.bodies, string(b))
		sc.slack.mu.Unlock()
		w.Write([]byte("ok"))
	}))
	t.Cleanup(sc.slack.Close)

	sc.smtp = smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": sc.secrets["smtp password"], "sdr02": "not-what-the-env-says"}})
	sc.echo = smtptest.NewRaw(t, smtptest.RawOptions{AuthEcho: true})
	sc.env = map[string]string{
		"DATABASE_URL":              sc.dbURL,
		"RINDA_SMTP_PASSWORD_SDR01": sc.secrets["smtp password"],
		"RINDA_SMTP_PASSWORD_SDR02": sc.secrets["wrong smtp password"],
		"RINDA_SMTP_PASSWORD_SDR03": sc.secrets["echoed smtp password"],
		events.SlackWebhookEnv:      sc.slack.URL + "/services/T0001/B0001/" + sc.secrets["slack token"],
		"RINDA_SECRET_KEY":          sc.secrets["master key"],
	}
	for _, srv := range sc.set.All() {
		sc.acceptKeys(srv)
		for k, v := range srv.Env(sc.secrets[srv.Provider()+" key"]) {
			sc.env[k] = v
		}
	}
	return sc
}

// acceptKeys makes srv accept the host's key for its provider and, for
// Hunter, the workspace's own key.
func (sc *secretScenario) acceptKeys(srv *providertest.Server) {
	if srv.Provider() == "hunter" {
		srv.SetKeys(sc.secrets["hunter key"], sc.secrets["workspace hunter key"])
		return
	}
	srv.SetKeys(sc.secrets[srv.Provider()+" key"])
}

// with returns the scenario's environment with overrides ("" deletes).
func (sc *secretScenario) with(overrides map[string]string) map[string]string {
	env := map[string]string{}
	for k, v := range sc.env {
		env[k] = v
	}
	for k, v := range overrides {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	return env
}

// anyFailure as a wanted exit code accepts any non-zero code.
const anyFailure = -1

// run runs a command, scans its output for secrets, and checks the exit
// code.
func (sc *secretScenario) run(t *testing.T, env map[string]string, want int, args ...string) result {
	t.Helper()
	return sc.runIn(t, env, nil, want, args...)
}

// runIn is run with stdin.
func (sc *secretScenario) runIn(t *testing.T, env map[string]string, stdin []byte, want int, args ...string) result {
	t.Helper()
	res := rindactlIn(t, env, stdin, args...)
	sc.commands++
	line := strings.Join(args, " ")
	for _, secret := range sc.secrets {
		line = strings.ReplaceAll(line, secret, "<secret>")
	}
	sc.assertNoSecret(t, "the output of rindactl "+line, res.stdout+res.stderr)
	if want >= 0 && res.code != want || want == anyFailure && res.code == 0 {
		t.Errorf("rindactl %s: want exit %d, got %s", line, want, res)
	}
	return res
}

// assertNoSecret fails for every secret found in text, in any form:
// as redact.Contains finds it, and as the standard library's decoders read
// it (redacttest.Leaks: percent, JSON, HTML, quoted-printable, base64).
func (sc *secretScenario) assertNoSecret(t *testing.T, where, text string) {
	t.Helper()
	for what, secret := range sc.secrets {
		if i := strings.Index(text, secret); i >= 0 {
			lo, hi := max(0, i-200), min(len(text), i+len(secret)+50)
			t.Errorf("the %s appears in %s: …%s…", what, where, text[lo:hi])
		} else if enc := redacttest.Leaks(text, secret); redact.Contains(text, secret) || enc != "" {
			t.Errorf("the %s appears encoded (%s) in %s: %s", what, enc, where, redact.Clip(text, 4000))
		}
	}
}

// TestSecretsNeverLeak runs every command, on its happy path and its error
// paths, with distinctive credentials, and scans stdout, stderr, every
// table (the events outbox above all) and what Slack received.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	sc := newSecretScenario(t)
	env := sc.env
	run := func(want int, args ...string) result { t.Helper(); return sc.run(t, env, want, args...) }

	// Set-up and read commands on a healthy scenario.
	run(0, "migrate")
	run(0, "migrate", "status", "-o", "json")
	run(0, "doctor")
	run(0, "doctor", "-o", "json")
	leads := writeFile(t, "leads.csv", leadsCSV("crm", 6, 4))
	run(0, "import", "leads", "--workspace", "acme", leads)
	run(0, "import", "leads", "--workspace", "acme", "-o", "json", leads)
	campaign := writeFile(t, "campaign.yaml", campaignYAML("acme", "q4",
		mailbox{"sdr01@acme.test", sc.smtp.URL("sdr01"), "RINDA_SMTP_PASSWORD_SDR01"},
		mailbox{"sdr02@acme.test", sc.smtp.URL("sdr02"), "RINDA_SMTP_PASSWORD_SDR02"},
		mailbox{"sdr03@acme.test", strings.Replace(sc.echo.URL(), "smtp://", "smtp://sdr03@", 1), "RINDA_SMTP_PASSWORD_SDR03"}))
	run(0, "import", "campaign", campaign)
	run(0, "import", "campaign", "-o", "json", campaign)
	run(0, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads")
	backdate(t, sc.db)
	// Workspace acme calls Hunter with its own key, sealed under the master
	// key (issue 24): the key goes in on stdin and never comes out.
	sc.runIn(t, env, []byte(sc.secrets["workspace hunter key"]+"\n"), 0, "workspace", "set-key", "--workspace", "acme", "--provider", "hunter")
	if res := run(0, "enrich", "tick", "--providers", "hunter,findymail", "--verify", "millionverifier", "-o", "json"); !strings.Contains(res.stdout, `"claimed": 6`) {
		t.Errorf("the healthy enrich tick claimed something else than 6 leads: %s", res)
	}
	if sc.set.Hunter.CountKey(sc.secrets["workspace hunter key"]) == 0 {
		t.Error("no Hunter call carried the workspace's own key: the scenario does not exercise it")
	}

	// Provider error paths: each with pending leads to call about.
	providerFaults := []struct {
		name  string
		setup func()
		env   map[string]string
		args  []string
	}{
		{"401 for the key", func() { sc.set.Findymail.SetKeys("someone-elses-key") }, nil, []string{"--providers", "findymail"}},
		{"redirect to another host", func() { sc.set.Hunter.SetMode(providertest.ModeRedirect) }, nil, []string{"--providers", "hunter"}},
		{"quota exhausted", func() { sc.set.Hunter.SetMode(providertest.ModeQuotaExhausted) }, nil, []string{"--providers", "hunter"}},
		{"HTML 502", func() { sc.set.MillionVerifier.SetMode(providertest.ModeServerError) }, nil, []string{"--providers", "findymail", "--verify", "millionverifier"}},
		{"connection refused (key in the query)", nil, map[string]string{providerhttp.BaseURLEnv("hunter"): "http://" + closedPort(t)}, []string{"--providers", "hunter"}},
		{"unresolvable host", nil, map[string]string{providerhttp.BaseURLEnv("findymail"): "http://provider.invalid"}, []string{"--providers", "findymail"}},
	}
	providerFaults = append(providerFaults, struct {
		name  string
		setup func()
		env   map[string]string
		args  []string
	}{"401 for the workspace's own key", func() { sc.set.Hunter.SetKeys(sc.secrets["hunter key"]) }, nil, []string{"--providers", "hunter"}})
	for _, pf := range providerFaults {
		requeueAll(t, sc.db)
		sqlExec(t, sc.db, `UPDATE breakers SET state = 'closed', open_until = NULL`)
		if pf.setup != nil {
			pf.setup()
		}
		args := append([]string{"enrich", "tick", "--max-duration", "20s"}, pf.args...)
		// A provider's failure is classified and recorded: the tick ran.
		sc.run(t, sc.with(pf.env), 0, args...)
		for _, srv := range sc.set.All() {
			srv.SetMode(providertest.ModeHealthy)
			sc.acceptKeys(srv)
		}
	}
	// Credits: read from every account endpoint, the workspace's own
	// key's included; then a refused key on the account endpoint.
	sqlExec(t, sc.db, `UPDATE provider_credits SET read_at = now() - interval '1 hour'`)
	run(0, "providers")
	run(0, "providers", "-o", "json")
	sc.set.Hunter.SetKeys(sc.secrets["hunter key"])
	sqlExec(t, sc.db, `UPDATE provider_credits SET read_at = now() - interval '1 hour'`)
	run(0, "providers", "-o", "json")
	sc.acceptKeys(sc.set.Hunter)
	if queryInt(t, sc.db, `SELECT count(*) FROM provider_credits WHERE read_error IS NOT NULL`) == 0 {
		t.Error("no failed credits reading recorded: the scenario does not exercise one")
	}
	// A wrong master key, and a rotation to a new one.
	sc.run(t, sc.with(map[string]string{"RINDA_SECRET_KEY": sc.secrets["new master key"]}), 2, "enrich", "tick", "--providers", "hunter")
	sc.run(t, sc.with(map[string]string{"RINDA_SECRET_KEY": "not-base64-" + sc.secrets["slack token"]}), 2, "providers")
	sc.run(t, sc.with(map[string]string{"RINDA_SECRET_KEY_NEW": sc.secrets["new master key"]}), 0, "secrets", "rotate")
	env["RINDA_SECRET_KEY"] = sc.secrets["new master key"]
	sc.env["RINDA_SECRET_KEY"] = sc.secrets["new master key"]
	requeueAll(t, sc.db)
	run(0, "enrich", "tick", "--providers", "hunter", "--max-duration", "20s")
	if n := sc.set.Hunter.RedirectHits(); n != 0 {
		t.Errorf("the Hunter client followed %d redirects to another host, key and all", n)
	}

	// Email: sdr01 authenticates, sdr02's password is refused (535).
	sqlExec(t, sc.db, `UPDATE enrollments SET next_send_at = now() - interval '1 second'`)
	run(0, "email", "tick", "-o", "json")
	run(0, "email", "tick")
	if sc.smtp.Accepted() == 0 {
		t.Error("the email tick sent nothing: the scenario does not exercise SMTP authentication")
	}
	if sc.echo.Auths() == 0 {
		t.Error("no AUTH reached the echoing server: the scenario does not exercise an echoed password")
	}

	// Operator commands.
	run(0, "status")
	run(0, "status", "-o", "json")
	run(0, "status", "--overdue")
	run(0, "requeue", "--status", "unreachable", "--dry-run")
	run(0, "requeue", "--status", "failed", "--dry-run", "-o", "json")
	run(0, "why", "lead", "crm-0")
	run(0, "why", "lead", "crm-1", "-o", "json")
	var enrollment string
	if err := sc.db.Pool.QueryRow(t.Context(), `SELECT min(id)::text FROM enrollments`).Scan(&enrollment); err != nil {
		t.Fatal(err)
	}
	run(0, "why", "enrollment", enrollment)
	run(0, "breaker", "list")
	run(0, "breaker", "list", "-o", "json")
	run(0, "workspace", "list")
	run(0, "workspace", "list", "-o", "json")
	run(0, "events", "list")
	run(0, "events", "list", "-o", "json")
	if queryInt(t, sc.db, `SELECT count(*) FROM events`) == 0 {
		t.Error("no event in the outbox: the scenario does not exercise the outbox")
	}

	// Events: a webhook that cannot be reached (its URL, token included,
	// must not end up in last_error), then the real one.
	broken := sc.with(map[string]string{events.SlackWebhookEnv: "http://" + closedPort(t) + "/services/T0001/B0001/" + sc.secrets["slack token"]})
	sqlExec(t, sc.db, `UPDATE events SET delivered_at = NULL, attempts = 0, next_attempt_at = now() - interval '1 second'`)
	if res := sc.run(t, broken, 0, "events", "deliver"); !strings.Contains(res.stdout, "0 event(s), ") || strings.Contains(res.stdout, " 0 failed") {
		t.Errorf("events deliver to an unreachable webhook should report failures: %s", res)
	}
	run(0, "events", "list")
	sqlExec(t, sc.db, `UPDATE events SET next_attempt_at = now() - interval '1 second' WHERE delivered_at IS NULL`)
	run(0, "events", "deliver", "-o", "json")
	if sc.slack.text() == "" {
		t.Error("Slack received nothing: the scenario does not exercise delivery")
	}

	for _, format := range []string{"crontab", "systemd", "kubernetes"} {
		run(0, "schedule", "print", "--format", format)
	}

	// Every command's help, found by walking the command tree.
	for _, path := range commandPaths(t, env) {
		run(0, append(path, "--help")...)
	}

	// Database error paths, with the password in the URL.
	withHost := func(host string) string {
		u, _ := url.Parse(sc.dbURL)
		u.Host = host
		return u.String()
	}
	badURLs := map[string]string{
		"closed port":    withHost(closedPort(t)),
		"unknown host":   withHost("db.invalid:5432"),
		"no database":    storetest.WithDatabase(sc.dbURL, "no_such_db"),
		"malformed port": strings.Replace(sc.dbURL, "127.0.0.1:", "127.0.0.1:x", 1),
	}
	dbCommands := [][]string{{"migrate"}, {"doctor"}, {"status"}, {"enrich", "tick"}, {"email", "tick"}, {"inbox", "tick"},
		{"import", "leads", "--workspace", "acme", leads}, {"import", "campaign", campaign}, {"events", "list"}, {"workspace", "list"},
		{"demo"}, {"bench", "claim", "--rows", "1", "--max-load", "0"}, {"bench", "email", "--steps", "1", "--mailboxes", "1", "--max-load", "0"}}
	for name, bad := range badURLs {
		for _, args := range dbCommands {
			res := sc.run(t, sc.with(map[string]string{"DATABASE_URL": bad}), anyFailure, args...)
			if !regexp.MustCompile(`cannot connect to Postgres|invalid database URL|database`).MatchString(res.stderr) {
				t.Errorf("%s: rindactl %s does not say what is wrong with the database: %s", name, strings.Join(args, " "), res)
			}
		}
		sc.run(t, sc.with(map[string]string{"DATABASE_URL": ""}), anyFailure, "--database-url", bad, "status")
	}

	sc.assertNoSecret(t, "the database (outbox included)", dumpTables(t, sc.db))
	sc.assertNoSecret(t, "what Slack received", sc.slack.text())
	figure(t, "secrets_commands_run", sc.commands)
}

// commandPaths lists every command below the root, from the help output.
func commandPaths(t *testing.T, env map[string]string) [][]string {
	t.Helper()
	var paths [][]string
	var walk func(path []string)
	walk = func(path []string) {
		res := rindactl(t, env, append(path, "--help")...)
		in := false
		for _, line := range strings.Split(res.stdout, "\n") {
			switch {
			case strings.HasPrefix(line, "Available Commands:"):
				in = true
			case in && strings.TrimSpace(line) == "":
				in = false
			case in:
				name := strings.Fields(line)[0]
				if name == "help" || name == "completion" {
					continue
				}
				sub := append(append([]string{}, path...), name)
				paths = append(paths, sub)
				walk(sub)
			}
		}
	}
	walk(nil)
	if len(paths) < 20 {
		t.Fatalf("found only %d commands in the help output: %v", len(paths), paths)
	}
	return paths
}
