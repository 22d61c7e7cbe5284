package sequence

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// stopsSQL is the SQL docs/email.md's "Stops" gives apps that end
// sequences themselves, one statement per element.
func stopsSQL(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/email.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Stops\n")
	if !ok {
		t.Fatal(`docs/email.md has no "## Stops" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```sql\n")
	if !ok {
		t.Fatal(`docs/email.md's "Stops" has no sql block`)
	}
	block, _, _ = strings.Cut(block, "```")
	var b strings.Builder
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "--")
		b.WriteString(line + "\n")
	}
	var out []string
	for _, s := range strings.Split(b.String(), ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

var sqlParam = regexp.MustCompile(`\$(\d+)`)

// The SQL docs/email.md gives apps for an unsubscribe inserted
// lower($2), the address as the app spells it, into suppressions, whose
// key is the SHA-256 of the canonical address: an IDN or NFD spelling
// (jorg@bücher.example for the stored jorg@xn--bcher-kva.example) was
// keyed by another hash and suppressed nothing. The documented statements
// (run with $1 the enrollment id and, should they take one, $2 the app's
// spelling) end the enrollment and suppress the address as the claim
// looks it up.
func TestDocumentedStopSQLSuppressesTheCanonicalAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 2, mailboxes: 1})
	f.exec(`UPDATE leads SET email = 'jorg@xn--bcher-kva.example' WHERE email = 'lead1@example.test'`)
	var enrollmentID int64
	if err := f.pool.QueryRow(context.Background(), `SELECT e.id FROM enrollments e JOIN leads l ON l.id = e.lead_id
		WHERE l.email = 'jorg@xn--bcher-kva.example'`).Scan(&enrollmentID); err != nil {
		t.Fatal(err)
	}
	given := []any{enrollmentID, "Jorg@Bücher.example"}
	for _, stmt := range stopsSQL(t) {
		n := 0
		for _, m := range sqlParam.FindAllStringSubmatch(stmt, -1) {
			i, _ := strconv.Atoi(m[1])
			n = max(n, i)
		}
		if n > len(given) {
			t.Fatalf("documented statement takes $%d: %s", n, stmt)
		}
		if _, err := f.pool.Exec(context.Background(), stmt, given[:n]...); err != nil {
			t.Fatalf("documented statement fails: %v\n%s", err, stmt)
		}
	}
	if got := f.count(`SELECT count(*) FROM enrollments WHERE id = $1 AND status = 'unsubscribed'`, enrollmentID); got != 1 {
		t.Error("the documented SQL did not end the enrollment as unsubscribed")
	}
	if got := f.count(`SELECT count(*) FROM suppressions s JOIN leads l ON s.workspace_id = l.workspace_id
		AND s.email_sha256 = address_sha256(l.email) WHERE l.email = 'jorg@xn--bcher-kva.example'`); got != 1 {
		t.Error("the documented SQL did not suppress the canonical address (the claim's lookup by email_sha256 misses it)")
	}
}
