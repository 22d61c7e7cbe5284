package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// tablesHolding lists the tables of the schema with a row whose text
// holds any of the needles (case-insensitive), with how many.
func tablesHolding(t *testing.T, db *storetest.DB, needles ...string) map[string]int {
	t.Helper()
	ctx := context.Background()
	tables := storetest.Column[string](t, db.Pool, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	found := map[string]int{}
	for _, table := range tables {
		var conds []string
		for _, n := range needles {
			conds = append(conds, "x::text ILIKE '%"+n+"%'")
		}
		var count int
		q := "SELECT count(*) FROM " + pgx.Identifier{table}.Sanitize() + " x WHERE " + strings.Join(conds, " OR ")
		if err := db.Pool.QueryRow(ctx, q).Scan(&count); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if count > 0 {
			found[table] = count
		}
	}
	return found
}

// Issue 25: lead forget erases a person everywhere (leads, enrollments,
// sends, campaign recipients, the suppression list's address, events and
// errors that quoted it), keeps only the SHA-256 of the canonical address
// in suppressions and one audit row; a later import leaves them out, and
// an address found again for another lead is never enrolled or mailed.
func TestLeadForgetErasesAndKeepsSuppressed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "pw1", "sdr02": "pw2"}})
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_SMTP_PASSWORD_SDR01": "pw1", "RINDA_SMTP_PASSWORD_SDR02": "pw2"}
	run := func(args ...string) cliResult {
		t.Helper()
		res := runCLI(t, env, args...)
		if res.code != 0 {
			t.Fatalf("rindactl %v: %+v", args, res)
		}
		return res
	}
	dir := t.TempDir()
	csv := filepath.Join(dir, "leads.csv")
	if err := os.WriteFile(csv, []byte("external_id,first_name,last_name,company_domain,email\ncrm-1,Ada,Lovelace,analytical.example,Ada@Analytical.example\ncrm-2,Alan,Turing,bletchley.example,alan@bletchley.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("import", "campaign", writeCampaign(t, srv, ""))
	run("import", "leads", "--workspace", "acme", csv)
	run("import", "leads", "--workspace", "globex", csv)
	run("enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads")
	run("email", "tick")
	if srv.Accepted() != 2 {
		t.Fatalf("step 1 went to %d addresses, want 2", srv.Accepted())
	}
	// What else may quote her address: her unsubscribe, a mailbox paused on
	// a reply naming her, an event, a tick's error, a skipped inbox message.
	var enrollmentID string
	if err := db.Pool.QueryRow(ctx, `SELECT e.id::text FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.external_id = 'crm-1'`).Scan(&enrollmentID); err != nil {
		t.Fatal(err)
	}
	run("enrollment", "mark", "--unsubscribed", enrollmentID)
	for _, q := range []string{
		`UPDATE mailboxes SET pause_reason = '550 5.1.1 <ada@analytical.example>: user unknown' WHERE address = 'sdr01@acme.test'`,
		`INSERT INTO events (kind, dedupe_key, payload, last_error) VALUES ('delivery_unknown', 'x', '{"to": "ADA@analytical.example"}', 'no reply for ada@analytical.example')`,
		`INSERT INTO tick_runs (kind, tick_id, host, pid, error) VALUES ('email', 't1', 'h', 1, 'recipient ada@analytical.example refused')`,
		`INSERT INTO inbox_skipped (mailbox_id, uid_validity, uid, reason, tick_id)
		 SELECT id, 1, 7, 'invalid input syntax: "Ada@Analytical.example"', 't1' FROM mailboxes WHERE address = 'sdr01@acme.test'`,
		`INSERT INTO inbox_unmatched (mailbox_id, uid_validity, uid, reason, tick_id)
		 SELECT id, 1, 8, 'a delivery report from ada@analytical.example naming 1 address(es) proves none of them ours', 't1' FROM mailboxes WHERE address = 'sdr01@acme.test'`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if found := tablesHolding(t, db, "ada@analytical", "lovelace"); len(found) < 8 {
		t.Fatalf("the setup left her in only %v", found)
	}

	res := run("lead", "forget", "--email", " ADA@analytical.EXAMPLE ", "--yes", "--output", "json")
	var out struct {
		EmailSHA256 string   `json:"email_sha256"`
		Workspaces  []string `json:"workspaces"`
		Leads       int64    `json:"leads"`
		Enrollments int64    `json:"enrollments"`
		Recipients  int64    `json:"campaign_recipients"`
		Hashed      int64    `json:"suppressions_hashed"`
		Scrubbed    int64    `json:"scrubbed"`
	}
	sum := sha256.Sum256([]byte("ada@analytical.example"))
	hash := hex.EncodeToString(sum[:])
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || out.EmailSHA256 != hash || strings.Join(out.Workspaces, ",") != "acme,globex" ||
		out.Leads != 2 || out.Enrollments != 1 || out.Recipients != 1 || out.Hashed != 1 || out.Scrubbed != 5 {
		t.Fatalf("forget: %+v (%v)\n%s", out, err, res.stdout)
	}
	if strings.Contains(res.stderr, "ada@") {
		t.Errorf("forget logged the address: %s", res.stderr)
	}
	if found := tablesHolding(t, db, "ada@analytical", "lovelace"); len(found) > 0 {
		t.Errorf("her data is still in %v", found)
	}
	var kept string
	if err := db.Pool.QueryRow(ctx, `SELECT string_agg(w.name || ':' || coalesce(s.email, '-') || ':' || encode(s.email_sha256, 'hex') || ':' || s.reason, ',' ORDER BY w.name)
		FROM suppressions s JOIN workspaces w ON w.id = s.workspace_id`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if want := "acme:-:" + hash + ":forgotten,globex:-:" + hash + ":forgotten"; kept != want {
		t.Errorf("suppressions = %s, want %s", kept, want)
	}
	var audit string
	if err := db.Pool.QueryRow(ctx, `SELECT filters::text FROM audit_log WHERE action = 'lead.forget'`).Scan(&audit); err != nil || !strings.Contains(audit, hash) {
		t.Errorf("audit row: %q %v", audit, err)
	}
	var alan int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM leads l JOIN enrollments e ON e.lead_id = l.id WHERE l.external_id = 'crm-2'`).Scan(&alan); err != nil || alan != 1 {
		t.Errorf("the other lead's enrollments: %d %v", alan, err)
	}

	// Imported again: her line is left out.
	res = run("import", "leads", "--workspace", "acme", csv)
	if !strings.Contains(res.stdout, "1 lines of forgotten people left out") {
		t.Errorf("re-import: %s", res.stdout)
	}
	if found := tablesHolding(t, db, "ada@analytical", "lovelace"); len(found) > 0 {
		t.Errorf("the re-import stored her again: %v", found)
	}
	// Found again for another lead (enrichment writes the address): never
	// enrolled, and an enrollment made behind enroll's back is not mailed.
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, first_name, email) SELECT id, 'A', 'ada@analytical.example' FROM workspaces WHERE name = 'acme'`); err != nil {
		t.Fatal(err)
	}
	if res := run("enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); !strings.Contains(res.stdout, "skipped 1 leads whose address is suppressed") {
		t.Errorf("enroll: %s", res.stdout)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO enrollments (campaign_id, lead_id, workspace_id, mailbox_id)
		SELECT c.id, l.id, l.workspace_id, (SELECT min(id) FROM mailboxes) FROM leads l JOIN campaigns c ON c.workspace_id = l.workspace_id
		WHERE l.first_name = 'A'`); err != nil {
		t.Fatal(err)
	}
	run("email", "tick")
	var status, why string
	if err := db.Pool.QueryRow(ctx, `SELECT e.status, e.last_error FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.first_name = 'A'`).Scan(&status, &why); err != nil {
		t.Fatal(err)
	}
	if srv.Accepted() != 2 || status != "failed" || why != "address suppressed: forgotten" {
		t.Errorf("the email tick: %d messages accepted (want 2), her enrollment %s (%s)", srv.Accepted(), status, why)
	}
}

func TestLeadForgetNeedsConfirmationAndAnAddress(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lead", "forget", "--email", "ada@analytical.example"}, "pass --yes"},
		{[]string{"lead", "forget", "--yes"}, "--email is required"},
		{[]string{"lead", "forget", "--email", "\u202eada@analytical.example", "--yes"}, "bidi control"},
		{[]string{"lead", "forget", "--email", "ada@analytical.example", "--workspace", "nosuch", "--yes"}, "unknown workspace"},
	} {
		res := runCLI(t, env, tc.args...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, %s; want 2 and %q", tc.args, res.code, res.stderr, tc.want)
		}
	}
}
