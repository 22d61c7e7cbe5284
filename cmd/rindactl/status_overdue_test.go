package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 16: `status --overdue` measures lateness from the step's original
// due time. 1,800 steps two hours late, one email tick against a server
// that refuses every recipient (a transient 451, so each step backs off a
// few minutes), and some rows under a tick's lease: all 1,800 are overdue.
// Before step_due_at, the backoff and the lease moved next_send_at into the
// future and status said "overdue 0".
func TestStatusOverdueCountsFromTheOriginalDueTime(t *testing.T) {
	t.Parallel()
	const n = 1800
	db := storetest.New(t)
	ctx := context.Background()
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "pw1", "sdr02": "pw2"}})
	srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, Code: 451, Enhanced: "4.3.0", Message: "Temporary local problem, try again later"})
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_SMTP_PASSWORD_SDR01": "pw1", "RINDA_SMTP_PASSWORD_SDR02": "pw2"}
	if res := runCLI(t, env, "import", "campaign", writeCampaign(t, srv, "")); res.code != 0 {
		t.Fatalf("import campaign: %+v", res)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, $1) g`, n); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != 0 {
		t.Fatalf("enroll: %+v", res)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE enrollments SET next_send_at = now() - interval '2 hours', step_due_at = now() - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}

	// --max-duration well past the work: on a loaded machine the default 50s
	// ends the tick before every refusal is recorded, and the rows it
	// releases unattempted are not what this test is about.
	tick := runCLI(t, env, "email", "tick", "--max-duration", "10m", "--output", "json")
	var rep struct {
		Claimed int `json:"claimed"`
		Sent    int `json:"sent"`
	}
	if tick.code != 0 || json.Unmarshal([]byte(tick.stdout), &rep) != nil || rep.Claimed < n || rep.Sent != 0 {
		t.Fatalf("email tick against a refusing server: exit %d, %+v\n%s", tick.code, rep, tick.stderr)
	}
	// Backed off: due again later than the step's original due time (not
	// later than now: on a loaded machine a long tick outlasts the first
	// rows' backoff).
	var backingOff int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM enrollments WHERE status = 'active' AND next_send_at > step_due_at AND attempts > 0`).Scan(&backingOff); err != nil || backingOff != n {
		t.Fatalf("%d of %d steps backing off after the refusals (%v)", backingOff, n, err)
	}
	// A tick holds 300 of them under its lease, as a claim leaves them.
	if _, err := db.Pool.Exec(ctx, `UPDATE enrollments SET next_send_at = now() + interval '5 minutes',
		locked_until = now() + interval '5 minutes', locked_by = 'other-tick'
		WHERE id IN (SELECT id FROM enrollments ORDER BY id LIMIT 300)`); err != nil {
		t.Fatal(err)
	}

	res := runCLI(t, env, "status", "--overdue", "--output", "json")
	var st struct {
		Email struct {
			Overdue              int64 `json:"overdue"`
			OldestOverdueSeconds int64 `json:"oldest_overdue_seconds"`
		} `json:"email"`
	}
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &st) != nil {
		t.Fatalf("status --overdue: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if st.Email.Overdue != n || st.Email.OldestOverdueSeconds < 7000 {
		t.Errorf("status --overdue: overdue %d, oldest %ds late; want %d, about 7200s", st.Email.Overdue, st.Email.OldestOverdueSeconds, n)
	}
}
