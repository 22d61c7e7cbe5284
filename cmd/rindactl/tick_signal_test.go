package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// runMainEnv makes the test binary behave as rindactl itself, so a test can
// run a tick as a real process and signal it without a separate build.
const runMainEnv = "RINDACTL_TEST_RUN_MAIN"

func init() {
	if os.Getenv(runMainEnv) == "1" {
		main()
	}
}

// startRindactl starts rindactl as a child process with exactly env (plus
// the re-exec switch); stdout and stderr are collected.
func startRindactl(t *testing.T, env map[string]string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = []string{runMainEnv + "=1"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &stdout, &stderr
}

// waitExit waits for cmd and returns its exit code. The deadline only
// guards against a hang; it asserts nothing about speed.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("the tick did not exit within 60s of SIGTERM")
	}
	return cmd.ProcessState.ExitCode()
}

// Issue 8: SIGTERM in the middle of a batch. The tick stops claiming,
// records what came back, releases what it had not finished, records its
// run and exits 0; no lead is left in_progress until its lease.
func TestEnrichTickSIGTERMMidBatchReleasesEveryClaim(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	db, set, env, tickEnv := a.db, a.set, a.env, a.tickEnv
	const n = 200
	importAcceptanceLeads(t, env, "acme", "sig", n)
	set.Findymail.SetLatency(300 * time.Millisecond)
	set.Hunter.SetLatency(300 * time.Millisecond)

	cmd, stdout, stderr := startRindactl(t, tickEnv, "enrich", "tick", "--concurrency", "10", "--nice", "0", "--output", "json")
	testkit.Eventually(t, "the tick to be mid-batch", func() bool { return set.Findymail.Count() >= 20 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s%s", code, stdout, stderr)
	}

	ctx := context.Background()
	assertTickRunFinished(t, db, "enrich")

	var locked, heldPending int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'in_progress' OR locked_by IS NOT NULL),
		count(*) FILTER (WHERE status = 'pending' AND locked_until IS NOT NULL)
		FROM lead_enrichment`).Scan(&locked, &heldPending); err != nil {
		t.Fatal(err)
	}
	if locked != 0 || heldPending != 0 {
		t.Errorf("%d leads still held by the tick, %d pending with a lease, want none", locked, heldPending)
	}
	got := leadStatusCounts(t, db, "")
	recorded := got["enriched"] + got["not_found"]
	// Mid-batch means both kinds are present: some leads came back and were
	// recorded, the rest were released as they were (attempt refunded).
	if recorded == 0 || got["pending"] == 0 || recorded+got["pending"] != n {
		t.Fatalf("leads after SIGTERM %v, want recorded and released ones summing to %d", got, n)
	}
	var charged int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM lead_enrichment WHERE status = 'pending' AND attempts > 0").Scan(&charged); err != nil || charged != 0 {
		t.Errorf("%d released leads were charged an attempt (%v), want 0", charged, err)
	}
}

// Issue 8 for the email tick: SIGTERM while mailboxes are sending. Every
// enrollment it claimed is sent (and recorded once) or released due, no
// 'sending' row is left behind, and the run is recorded with exit 0.
func TestEmailTickSIGTERMMidBatchReleasesEveryClaim(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{})
	addr := testkit.SlowProxy(t, fmt.Sprintf("%s:%d", srv.Host(), srv.Port()), 40*time.Millisecond)
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_SMTP_PASSWORD_SDR01": "pw1", "RINDA_SMTP_PASSWORD_SDR02": "pw2"}
	campaign := filepath.Join(t.TempDir(), "campaign.yaml")
	doc := fmt.Sprintf(`workspace: acme
name: q4
mailboxes:
  - address: sdr01@acme.test
    smtp_url: smtp://sdr01@%[1]s
    password_env: RINDA_SMTP_PASSWORD_SDR01
    daily_cap: 1000
  - address: sdr02@acme.test
    smtp_url: smtp://sdr02@%[1]s
    password_env: RINDA_SMTP_PASSWORD_SDR02
    daily_cap: 1000
steps:
  - subject: "Hi {{.FirstName}}"
    body: "Hello"
`, addr)
	if err := os.WriteFile(campaign, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "import", "campaign", campaign); res.code != exitOK {
		t.Fatalf("import campaign: %+v", res)
	}
	const n = 60
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, $1) g`, n); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != exitOK {
		t.Fatalf("enroll: %+v", res)
	}

	tickEnv := map[string]string{"DATABASE_URL": db.TickURL(), "RINDA_SMTP_PASSWORD_SDR01": "pw1", "RINDA_SMTP_PASSWORD_SDR02": "pw2"}
	cmd, stdout, stderr := startRindactl(t, tickEnv, "email", "tick", "--output", "json")
	testkit.Eventually(t, "the tick to be mid-batch", func() bool { return srv.Accepted() >= 4 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s%s", code, stdout, stderr)
	}

	assertTickRunFinished(t, db, "email")
	var held, sending, sent, advanced, waiting int
	if err := db.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM enrollments WHERE locked_by IS NOT NULL OR next_send_at > now() + interval '1 minute'),
		(SELECT count(*) FROM sends WHERE status = 'sending'),
		(SELECT count(*) FROM sends WHERE status = 'sent'),
		(SELECT count(*) FROM enrollments WHERE current_step > 1 OR status = 'completed'),
		(SELECT count(*) FROM enrollments WHERE status = 'active' AND current_step = 1 AND next_send_at <= now())`).
		Scan(&held, &sending, &sent, &advanced, &waiting); err != nil {
		t.Fatal(err)
	}
	if held != 0 || sending != 0 {
		t.Errorf("%d enrollments still leased or backed off, %d sends left 'sending', want none", held, sending)
	}
	// Issue 29: the signal is no mailbox's failure: no pause, no backoff,
	// no attempt charged.
	var paused, charged int
	if err := db.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM mailboxes WHERE paused_until IS NOT NULL OR status <> 'active'),
		(SELECT count(*) FROM enrollments WHERE attempts > 0 OR last_error IS NOT NULL)`).Scan(&paused, &charged); err != nil {
		t.Fatal(err)
	}
	if paused != 0 || charged != 0 || strings.Contains(stdout.String(), `"transient"`) {
		t.Errorf("after SIGTERM: %d mailboxes paused, %d enrollments charged, report %s; want none", paused, charged, stdout)
	}
	// Every accepted message is recorded once as sent and moved its
	// enrollment on; every other enrollment is due again at step 1.
	if sent != srv.Accepted() || advanced != sent || sent+waiting != n || waiting == 0 {
		t.Errorf("server accepted %d; sends sent=%d, enrollments advanced=%d waiting=%d, want equal counts summing to %d with some waiting",
			srv.Accepted(), sent, advanced, waiting, n)
	}
}

// Issue 29 for the inbox tick: SIGTERM while a session is reading a
// mailbox over a slow link. The cut session is no mailbox failure: no
// last_error on the checkpoint, no mailbox_error, the mailbox released, the
// run recorded with exit 0.
func TestInboxTickSIGTERMMidSessionIsNoMailboxFailure(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	smtp := smtptest.New(t, smtptest.Options{})
	imap := imaptest.New(t, nil)
	if err := imap.AddAccount("sdr01@acme.test", "imap-s3cret"); err != nil {
		t.Fatal(err)
	}
	imapAddr := strings.TrimPrefix(imap.URL("x"), "imap://x@")
	slow := testkit.SlowProxy(t, imapAddr, 300*time.Millisecond)
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_PASSWORD_SDR01": "imap-s3cret"}
	campaign := filepath.Join(t.TempDir(), "campaign.yaml")
	doc := fmt.Sprintf(`workspace: acme
name: q4
mailboxes:
  - address: sdr01@acme.test
    smtp_url: %s
    imap_url: imap://sdr01@acme.test@%s
    password_env: RINDA_PASSWORD_SDR01
steps:
  - subject: "Hi {{.FirstName}}"
    body: "Hello"
`, smtp.URL(""), slow)
	if err := os.WriteFile(campaign, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "import", "campaign", campaign); res.code != exitOK {
		t.Fatalf("import campaign: %+v", res)
	}

	tickEnv := map[string]string{"DATABASE_URL": db.TickURL(), "RINDA_PASSWORD_SDR01": "imap-s3cret"}
	cmd, stdout, stderr := startRindactl(t, tickEnv, "inbox", "tick", "--output", "json")
	ctx := context.Background()
	testkit.Eventually(t, "the tick to be reading the mailbox", func() bool {
		var leased int
		err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM inbox_checkpoints WHERE locked_by IS NOT NULL`).Scan(&leased)
		return err == nil && leased == 1
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s%s", code, stdout, stderr)
	}
	assertTickRunFinished(t, db, "inbox")
	var failed int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM inbox_checkpoints WHERE locked_by IS NOT NULL OR last_error IS NOT NULL`).Scan(&failed); err != nil {
		t.Fatal(err)
	}
	if failed != 0 || strings.Contains(stdout.String(), "mailbox_error") {
		t.Errorf("after SIGTERM: %d checkpoints leased or in error, report %s; want none", failed, stdout)
	}
}

// assertTickRunFinished checks the one tick_runs row of kind: a SIGTERM
// stop is recorded as a finished run with exit status 0, after claiming.
func assertTickRunFinished(t *testing.T, db *storetest.DB, kind string) {
	t.Helper()
	var finished bool
	var exitStatus, claimed int
	if err := db.Pool.QueryRow(context.Background(), `SELECT finished_at IS NOT NULL, coalesce(exit_status, -1), claimed
		FROM tick_runs WHERE kind = $1`, kind).Scan(&finished, &exitStatus, &claimed); err != nil {
		t.Fatalf("one %s tick_runs row: %v", kind, err)
	}
	if !finished || exitStatus != 0 || claimed == 0 {
		t.Errorf("%s tick_runs: finished=%v exit_status=%d claimed=%d, want finished with 0 after claiming", kind, finished, exitStatus, claimed)
	}
}

// Issue 29: SIGTERM with 25 calls in flight against a stand-in that holds
// them. The calls were cut by the tick, not failed by Hunter: no failure
// streak, no breaker_opened event, the leads go back uncharged, and the
// next tick calls Hunter at once. Before the fix the 25 cut calls counted
// as transient failures, opened Hunter's breaker for a minute, and the
// next tick made no call. Issue 39: the stop waits for their answers up to
// the provider timeout, then settles them in doubt (their requests went
// out: Hunter may bill them), their leads not sent to Hunter again before
// the in-doubt wait.
func TestEnrichTickSIGTERMWithCallsInFlightLeavesBreakerClosed(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	const n = 300
	importAcceptanceLeads(t, a.env, "acme", "cut", n)
	// The first call answers (slow start fans out after it); every later
	// one hangs until its client leaves.
	a.set.Hunter.HoldAfter(1)
	env := maps.Clone(a.tickEnv)
	// How long the stop waits for the held answers; unpaced, the 25 calls
	// are all held well within it.
	env["RINDA_HUNTER_TIMEOUT"], env["RINDA_HUNTER_RATE"] = "5s", "off"

	cmd, stdout, stderr := startRindactl(t, env, "enrich", "tick", "--providers", "hunter", "--concurrency", "25", "--nice", "0", "--output", "json")
	testkit.Eventually(t, "25 calls in flight", func() bool { return a.set.Hunter.Held() == 25 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s%s", code, stdout, stderr)
	}
	logs := stderr.String()
	if strings.Contains(logs, "provider call blocked") || strings.Contains(logs, "failed transiently") {
		t.Errorf("stderr must not call the cut calls blocked or failed:\n%s", logs)
	}
	var doubted, inDoubt int
	if err := a.db.Pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM lead_enrichment WHERE status = 'pending' AND attempts = 0 AND doubted_by = '{hunter}'
			AND next_attempt_at > now() + interval '1 hour' AND last_error LIKE '%RINDA_IN_DOUBT_RETRY_AFTER%'),
		(SELECT count(*) FROM provider_calls WHERE state = 'settled' AND outcome = 'in_doubt')`).Scan(&doubted, &inDoubt); err != nil {
		t.Fatal(err)
	}
	if doubted != 25 || inDoubt != 25 {
		t.Errorf("%d leads and %d calls in doubt, want the 25 held", doubted, inDoubt)
	}

	ctx := context.Background()
	assertBreakersClosed(t, a.env)
	var opened, charged, withError int
	if err := a.db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM events WHERE kind = 'breaker_opened'),
		(SELECT count(*) FROM lead_enrichment WHERE status = 'pending' AND attempts > 0),
		(SELECT count(*) FROM lead_enrichment WHERE last_error IS NOT NULL AND doubted_by = '{}')`).Scan(&opened, &charged, &withError); err != nil {
		t.Fatal(err)
	}
	if opened != 0 || charged != 0 || withError != 0 {
		t.Errorf("after SIGTERM: %d breaker_opened events, %d released leads charged, %d with an error; want none", opened, charged, withError)
	}

	// The next tick calls Hunter at once.
	a.set.Hunter.HoldAfter(-1)
	before := a.set.Hunter.Count()
	// 5s, not 2s: room for a loaded machine to start the process and claim.
	rep := runEnrichTick(t, a.tickEnv, "--providers", "hunter", "--max-duration", "5s", "--nice", "0")
	if rep.Calls["hunter"] == 0 || a.set.Hunter.Count() == before {
		t.Fatalf("next tick %+v: want Hunter called at once", rep)
	}
	if err := a.db.Pool.QueryRow(ctx, `SELECT count(*) FROM lead_enrichment WHERE last_error LIKE '%breaker%'`).Scan(&withError); err != nil || withError != 0 {
		t.Errorf("%d leads held back by a breaker (%v), want none", withError, err)
	}
	assertBreakersClosed(t, a.env)
}

// assertBreakersClosed checks `breaker list`: every breaker is closed with
// no failure streak.
func assertBreakersClosed(t *testing.T, env map[string]string) {
	t.Helper()
	r := runCLI(t, env, "breaker", "list", "--output", "json")
	var bl struct {
		Breakers []struct {
			Workspace, Provider, State string
			Failures                   int `json:"consecutive_failures"`
		} `json:"breakers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &bl); err != nil {
		t.Fatalf("breaker list json: %v %q", err, r.stdout)
	}
	for _, b := range bl.Breakers {
		if b.State != "closed" || b.Failures != 0 {
			t.Errorf("breaker %s/%s is %s with %d failures, want closed with none", b.Workspace, b.Provider, b.State, b.Failures)
		}
	}
}

// Issue 25: SIGTERM while the IMAP server stalls mid-FETCH (for longer
// than the test waits). The inbox tick closes the connection, records the
// run and exits 0 at once; the mailbox is released, with no error on it.
func TestInboxTickSIGTERMWhileTheServerStalls(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	smtp := smtptest.New(t, smtptest.Options{})
	raw := imaptest.NewRaw(t, imaptest.RawOptions{Password: "imap-s3cret", FetchStall: 10 * time.Minute,
		Messages: [][]byte{[]byte("From: a@example.test\r\nSubject: hi\r\n\r\nhello\r\n")}})
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_PASSWORD_SDR01": "imap-s3cret"}
	file := filepath.Join(t.TempDir(), "campaign.yaml")
	doc := fmt.Sprintf("workspace: acme\nname: q4\nmailboxes:\n  - address: sdr01@acme.test\n    smtp_url: %s\n    imap_url: %s\n"+
		"    password_env: RINDA_PASSWORD_SDR01\nsteps:\n  - subject: Hi\n    body: Hello\n", smtp.URL(""), raw.URL("sdr01@acme.test"))
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "import", "campaign", file); res.code != exitOK {
		t.Fatalf("import campaign: %+v", res)
	}
	env["DATABASE_URL"] = db.TickURL()
	cmd, stdout, stderr := startRindactl(t, env, "inbox", "tick", "--max-duration", "5m", "--lease", "10m", "--output", "json")
	select {
	case <-raw.Stalled():
	case <-time.After(60 * time.Second):
		t.Fatal("the server never stalled")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s%s", code, stdout, stderr)
	}
	assertTickRunFinished(t, db, "inbox")
	var leased, errored int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE locked_by IS NOT NULL), count(*) FILTER (WHERE last_error IS NOT NULL)
		FROM inbox_checkpoints`).Scan(&leased, &errored); err != nil {
		t.Fatal(err)
	}
	if leased != 0 || errored != 0 {
		t.Errorf("%d mailboxes left leased, %d with an error; a stop is neither", leased, errored)
	}
}

// A SIGTERM that reaches a tick before its first claim (here while it
// waits for a table, as behind a migration or a long operator
// transaction) is a clean stop: exit 0, the run recorded as finished,
// nothing claimed. The email tick exited 1 with "context canceled", which
// systemd reports as a failed unit on every stop.
func TestTickSIGTERMBeforeItsFirstClaimIsACleanStop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ kind, table string }{
		{"email", "mailboxes"},
		{"inbox", "mailboxes"},
		// Not enrich: its claim is never cancelled mid-statement (a claim
		// committed but not read would strand its leads), so a locked
		// table ends it by lock_timeout, exit 1.
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			sigtermBeforeFirstClaim(t, tc.kind, tc.table)
		})
	}
}

func sigtermBeforeFirstClaim(t *testing.T, kind, table string) {
	db := storetest.New(t)
	ctx := context.Background()
	tx := lockTable(t, db, table)

	cmd, stdout, stderr := startRindactl(t, map[string]string{"DATABASE_URL": db.TickURL()}, kind, "tick", "--output", "json")
	testkit.Eventually(t, "the tick to wait for the "+table+" table", waitingOn(db, ""))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM before the first claim, want 0\n%s%s", code, stdout, stderr)
	}
	_ = tx.Rollback(ctx)
	assertStoppedBeforeClaim(t, db, kind, stdout)
}

// A SIGTERM while a tick records its start (tick_runs locked, as behind
// a migration or a long prune) is a clean stop too: exit 0 and the run
// recorded as finished with nothing claimed. The enrich tick exited 1
// "recording enrich tick start: context canceled", and rindactl run logged
// the tick failed on a plain stop; the events and prune ticks did the same
// ("stopped before the tick started", exit 1) until every kind was here.
func TestTickSIGTERMWhileRecordingItsStartIsACleanStop(t *testing.T) {
	t.Parallel()
	for _, kind := range tickkind.All {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			sigtermWhileRecordingStart(t, kind)
		})
	}
}

func sigtermWhileRecordingStart(t *testing.T, kind tickkind.Kind) {
	db := storetest.New(t)
	ctx := context.Background()
	tx := lockTable(t, db, "tick_runs")
	cmd, stdout, stderr := startRindactl(t, tickTestEnv(db), append(kind.Args(), "--output", "json")...)
	testkit.Eventually(t, "the tick to wait to record its start", waitingOn(db, "TickStart"))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The start was cancelled; the tick now records that it stopped.
	testkit.Eventually(t, "the tick to record its stop", waitingOn(db, "TickStopped"))
	_ = tx.Rollback(ctx)
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM while recording its start, want 0\n%s%s", code, stdout, stderr)
	}
	assertStoppedBeforeClaim(t, db, string(kind), stdout)
}

// A SIGTERM while the enrich tick reads the workspaces' stored provider
// keys, before it records its start, is a clean stop too: exit 0, no run
// recorded, nothing claimed. It exited 1 "list workspace provider keys:
// context canceled", and rindactl run logged the tick failed on a plain
// stop (CI, TestEveryGeneratedUnitRuns under load).
func TestEnrichTickSIGTERMWhileReadingStoredKeysIsACleanStop(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	tx := lockTable(t, db, "workspace_provider_keys")
	cmd, stdout, stderr := startRindactl(t, tickTestEnv(db), "enrich", "tick", "--output", "json")
	testkit.Eventually(t, "the tick to wait to read the stored keys", waitingOn(db, "ProviderKeysList"))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM while reading stored keys, want 0\n%s%s", code, stdout, stderr)
	}
	_ = tx.Rollback(ctx)
	if !strings.Contains(stderr.String(), "enrich tick stopped by a signal before it started") {
		t.Errorf("stderr does not say the tick stopped before it started:\n%s", stderr)
	}
	var runs int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM tick_runs`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 0 {
		t.Errorf("%d tick_runs rows, want none: the tick stopped before its start", runs)
	}
}

// tickTestEnv runs any kind's tick against db with nothing due; the
// provider keys only pass the enrich tick's checks.
func tickTestEnv(db *storetest.DB) map[string]string {
	return map[string]string{"DATABASE_URL": db.TickURL(),
		"RINDA_HUNTER_API_KEY": "unused", "RINDA_FINDYMAIL_API_KEY": "unused"}
}

// waitingOn reports whether another session of db waits on a lock in the
// store query named query ("": in any statement). It matches the name
// sqlc sends at the head of each statement ("-- name: TickStart :one"),
// the query's identity, so rewording a query's SQL breaks no test here.
func waitingOn(db *storetest.DB, query string) func() bool {
	return func() bool {
		var n int
		err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'
			AND pid <> pg_backend_pid() AND ($1 = '' OR query LIKE '-- name: ' || $1 || ' :%')`, query).Scan(&n)
		return err == nil && n > 0
	}
}

// lockTable holds table in ACCESS EXCLUSIVE mode in a transaction the
// test rolls back (at the latest when it ends).
func lockTable(t *testing.T, db *storetest.DB, table string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	return tx
}

// assertStoppedBeforeClaim checks a kind's one tick run: finished with
// exit 0 and nothing claimed, its JSON report on stdout.
func assertStoppedBeforeClaim(t *testing.T, db *storetest.DB, kind string, stdout *bytes.Buffer) {
	t.Helper()
	var finished bool
	var exitStatus, claimed int
	if err := db.Pool.QueryRow(context.Background(), `SELECT finished_at IS NOT NULL, coalesce(exit_status, -1), claimed
		FROM tick_runs WHERE kind = $1`, kind).Scan(&finished, &exitStatus, &claimed); err != nil {
		t.Fatalf("one %s tick_runs row: %v", kind, err)
	}
	if !finished || exitStatus != 0 || claimed != 0 {
		t.Errorf("%s tick_runs: finished=%v exit_status=%d claimed=%d, want finished with 0 and nothing claimed", kind, finished, exitStatus, claimed)
	}
	if !json.Valid(stdout.Bytes()) {
		t.Errorf("stdout is not the tick's JSON report:\n%s", stdout)
	}
}

// A SIGTERM while the tick is still connecting (a database that accepts
// the connection and says nothing, as one stuck in recovery or behind a
// hung proxy) is a stop asked for, not a failure: exit 0. It exited 1
// "cannot connect to Postgres", and rindactl run logged the tick failed.
func TestTickSIGTERMWhileConnectingIsACleanStop(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	url := "postgres://tick:secret@" + ln.Addr().String() + "/rindactl?sslmode=disable"
	cmd, stdout, stderr := startRindactl(t, map[string]string{"DATABASE_URL": url}, "email", "tick")
	select {
	case <-accepted:
	case <-time.After(60 * time.Second):
		t.Fatal("the tick never connected")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM while connecting, want 0\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stderr.String(), "secret") {
		t.Errorf("stderr shows the database password:\n%s", stderr)
	}
}

// A SIGTERM at any moment of any kind's tick, from before its handler is
// set to after its run is recorded, is a clean stop: exit 0, or death by
// that signal before the handler was set (which rindactl run reports as
// such, not as a failure). The delays spread over a tick's whole life on
// a database with nothing due; the events and prune ticks exited 1 when
// the signal met their start ("stopped before the tick started").
func TestTickSIGTERMAtAnyMomentIsACleanStop(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	for _, kind := range tickkind.All {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			for delay := time.Duration(0); delay <= 120*time.Millisecond; delay += 3 * time.Millisecond {
				cmd, stdout, stderr := startRindactl(t, tickTestEnv(db), kind.Args()...)
				time.Sleep(delay)
				_ = cmd.Process.Signal(syscall.SIGTERM)
				code := waitExit(t, cmd)
				ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if code != exitOK && !(ws.Signaled() && ws.Signal() == syscall.SIGTERM) {
					t.Errorf("SIGTERM after %v: exit %d, want 0\n%s%s", delay, code, stdout, stderr)
				}
			}
		})
	}
}
