package reliability

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sqlExec runs SQL as the superuser on the test database.
func sqlExec(t testing.TB, db *storetest.DB, sql string, args ...any) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func queryInt(t testing.TB, db *storetest.DB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// mailbox is one mailbox of a generated campaign file.
type mailbox struct {
	address, smtpURL, passwordEnv string
}

// campaignYAML renders a campaign of two steps (the follow-up due at once,
// so one run exercises both) over the mailboxes.
func campaignYAML(workspace, name string, mbs ...mailbox) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace: %s\nname: %s\nmailboxes:\n", workspace, name)
	for _, mb := range mbs {
		fmt.Fprintf(&b, "  - address: %s\n    smtp_url: %s\n", mb.address, mb.smtpURL)
		if mb.passwordEnv != "" {
			fmt.Fprintf(&b, "    password_env: %s\n", mb.passwordEnv)
		}
	}
	b.WriteString("steps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"Hello {{.FirstName}} at {{.Company}}\"\n  - delay: 0s\n    body: \"Following up\"\n")
	return b.String()
}

// leadsCSV renders n leads of workspace ws without an email (to enrich)
// and m with one (to mail at once).
func leadsCSV(prefix string, n, m int) string {
	var b strings.Builder
	b.WriteString("external_id,first_name,last_name,company_domain,email,company\n")
	for i := range n {
		fmt.Fprintf(&b, "%s-%d,Ada%d,Lovelace,co%d.example,,Co %d\n", prefix, i, i, i, i)
	}
	for i := range m {
		fmt.Fprintf(&b, "%s-m%d,Alan%d,Turing,mail%d.example,alan%d@mail%d.example,Co %d\n", prefix, i, i, i, i, i, i)
	}
	return b.String()
}

// backdate makes every waiting lead due and older than any tick about to
// start (a tick skips rows updated since it started).
func backdate(t testing.TB, db *storetest.DB) {
	t.Helper()
	sqlExec(t, db, `UPDATE lead_enrichment SET next_attempt_at = now() - interval '1 second',
		updated_at = now() - interval '1 second', negative_cache_until = NULL
		WHERE status IN ('pending', 'unreachable')`)
}

// requeueAll puts every lead back to pending and due, as if never worked.
func requeueAll(t testing.TB, db *storetest.DB) {
	t.Helper()
	// As `requeue --refind`: what providers answered before is forgotten,
	// so every lead needs its calls again.
	sqlExec(t, db, `UPDATE lead_enrichment SET status = 'pending', attempts = 0, locked_until = NULL, locked_by = NULL,
		negative_cache_until = NULL, next_attempt_at = now() - interval '1 second', updated_at = now() - interval '1 second',
		found_email = NULL, found_by = NULL, missed_by = '{}'`)
}

// dumpTables renders every row of every table of the test database as
// JSON text, for scanning for secrets.
func dumpTables(t testing.TB, db *storetest.DB) string {
	t.Helper()
	return storetest.Dump(t, db.Pool)
}
