package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestInboxTickEndsARepliedSequence(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	smtp := smtptest.New(t, smtptest.Options{})
	imap := imaptest.New(t, nil)
	if err := imap.AddAccount("sdr01@acme.test", "imap-s3cret"); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_PASSWORD_SDR01": "imap-s3cret"}
	file := filepath.Join(t.TempDir(), "campaign.yaml")
	doc := fmt.Sprintf(`workspace: acme
name: q4
mailboxes:
  - address: sdr01@acme.test
    smtp_url: %s
    imap_url: %s
    password_env: RINDA_PASSWORD_SDR01
steps:
  - subject: "Hi {{.FirstName}}"
    body: "Hello"
  - delay: 1h
    body: "Following up"
`, smtp.URL(""), imap.URL("sdr01@acme.test"))
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "import", "campaign", file); res.code != 0 {
		t.Fatalf("import = %+v", res)
	}
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, first_name, email)
		SELECT w.id, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, 2) g`); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"}, {"email", "tick"}} {
		if res := runCLI(t, env, args...); res.code != 0 {
			t.Fatalf("%v = %+v", args, res)
		}
	}
	var messageID string
	if err := db.Pool.QueryRow(ctx, `SELECT s.message_id FROM sends s JOIN enrollments e ON e.id = s.enrollment_id
		JOIN leads l ON l.id = e.lead_id WHERE l.email = 'lead1@example.test'`).Scan(&messageID); err != nil {
		t.Fatal(err)
	}
	reply := imaptest.Sample("gmail-reply.eml", imaptest.Fill{MessageID: messageID, Mailbox: "sdr01@acme.test", Recipient: "lead1@example.test"})
	if err := imap.Deliver("sdr01@acme.test", reply); err != nil {
		t.Fatal(err)
	}

	res := runCLI(t, env, "inbox", "tick", "--output", "json")
	var rep struct {
		Mailboxes int            `json:"mailboxes"`
		Messages  int            `json:"messages"`
		Outcomes  map[string]int `json:"outcomes"`
	}
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &rep) != nil || rep.Mailboxes != 1 || rep.Messages != 1 || rep.Outcomes["replied"] != 1 {
		t.Fatalf("inbox tick = %+v (report %+v)", res, rep)
	}
	// A forged report naming lead 2 (mailed) proves nothing (issue 37): the
	// tick lists it as unmatched and lead 2's sequence goes on.
	forged := "From: attacker@evil.test\r\nTo: sdr01@acme.test\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.evil.test\r\n\r\n" +
		"Final-Recipient: rfc822; lead2@example.test\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n"
	if err := imap.Deliver("sdr01@acme.test", []byte(forged)); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "inbox", "tick"); res.code != 0 || !strings.Contains(res.stdout, "unmatched=1") ||
		!strings.Contains(res.stdout, "unmatched sdr01@acme.test UID 2: a delivery report from attacker@evil.test") {
		t.Fatalf("inbox tick with a forged report = %+v", res)
	}
	// The follow-up is due, but only the lead who did not reply gets it.
	if _, err := db.Pool.Exec(ctx, `UPDATE enrollments SET next_send_at = now() - interval '1 second' WHERE status = 'active'`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "email", "tick"); res.code != 0 || smtp.Accepted() != 3 {
		t.Fatalf("email tick after the reply = %+v, server accepted %d of 3", res, smtp.Accepted())
	}
	if strings.Contains(res.stdout+res.stderr, "s3cret") {
		t.Error("the IMAP password was printed")
	}
	if res := runCLI(t, env, "inbox", "tick", "--lease", "10s", "--max-duration", "20s"); res.code != exitUsage || !strings.Contains(res.stderr, "--lease") {
		t.Errorf("bad flags = %+v, want exit 2 naming --lease", res)
	}
	// Without the password the tick fails (exit 1) and says which variable.
	delete(env, "RINDA_PASSWORD_SDR01")
	if res := runCLI(t, env, "inbox", "tick"); res.code != 1 || !strings.Contains(res.stderr, "RINDA_PASSWORD_SDR01") {
		t.Errorf("inbox tick without the password = %+v", res)
	}
}
