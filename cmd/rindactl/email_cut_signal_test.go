package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 37, item 6, with a real SIGTERM and the shipped defaults (no flag
// but --output): the email tick is told to stop while a session waits for
// the reply to its final dot (the server stalls with the message). The
// step is delivery_unknown (its server may have it: never resent) and names
// the signal; the mailbox's other rows were never tried and stay as they
// were: due as before, no attempt, no error text, no pause. Before the fix
// they were pushed back 5 minutes with "mailbox connection failed: … use of
// closed network connection".
func TestEmailTickSIGTERMAfterTheDotLeavesTheMailboxsRows(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	raw := smtptest.NewRaw(t, smtptest.RawOptions{AfterDot: smtptest.AfterDotHang})
	env := map[string]string{"DATABASE_URL": db.URL}
	campaign := filepath.Join(t.TempDir(), "campaign.yaml")
	doc := fmt.Sprintf(`workspace: acme
name: q4
mailboxes:
  - address: sdr01@acme.test
    smtp_url: %s
steps:
  - subject: "Hi {{.FirstName}}"
    body: "Hello"
`, raw.URL())
	if err := os.WriteFile(campaign, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "import", "campaign", campaign); res.code != exitOK {
		t.Fatalf("import campaign: %+v", res)
	}
	const n = 4
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, $1) g`, n); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != exitOK {
		t.Fatalf("enroll: %+v", res)
	}
	type row struct {
		status, lastError string
		attempts          int
		due               time.Time
	}
	states := func() map[int64]row {
		rows, err := db.Pool.Query(ctx, `SELECT id, status, coalesce(last_error, ''), attempts, next_send_at FROM enrollments`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]row{}
		for rows.Next() {
			var id int64
			var r row
			if err := rows.Scan(&id, &r.status, &r.lastError, &r.attempts, &r.due); err != nil {
				t.Fatal(err)
			}
			out[id] = r
		}
		return out
	}
	before := states()

	cmd, stdout, stderr := startRindactl(t, tickTestEnv(db), "email", "tick", "--output", "json")
	select {
	case <-raw.DotReceived():
	case <-time.After(60 * time.Second): // a hang guard, not a bound
		t.Fatalf("no message reached the server\n%s%s", stdout, stderr)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s%s", code, stdout, stderr)
	}
	assertTickRunFinished(t, db, "email")

	unknown := 0
	for id, now := range states() {
		if now.status == "delivery_unknown" {
			unknown++
			if !strings.Contains(now.lastError, "delivery unknown") || !strings.Contains(now.lastError, "signal") {
				t.Errorf("the unanswered step's last_error %q, want delivery unknown naming the signal", now.lastError)
			}
			continue
		}
		if was := before[id]; now != was {
			t.Errorf("enrollment %d: %+v after SIGTERM, want it as it was: %+v", id, now, was)
		}
	}
	if unknown != 1 || len(raw.Received()) != 1 {
		t.Errorf("%d enrollments delivery_unknown, %d messages at the server; want the 1 whose reply never came", unknown, len(raw.Received()))
	}
	var paused, sending int
	if err := db.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM mailboxes WHERE paused_until IS NOT NULL OR status <> 'active'),
		(SELECT count(*) FROM sends WHERE status = 'sending')`).Scan(&paused, &sending); err != nil {
		t.Fatal(err)
	}
	if paused != 0 || sending != 0 || strings.Contains(stdout.String(), `"transient"`) {
		t.Errorf("after SIGTERM: %d mailboxes paused, %d sends left 'sending', report %s; want none", paused, sending, stdout)
	}
}
