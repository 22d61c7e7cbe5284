package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// Issue 25: a suppression list exported and imported elsewhere is the same
// list: addresses in canonical form, reasons, dates, and a forgotten
// person's hash alone.
func TestSuppressionsImportExportRoundTrip(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO workspaces (name) VALUES ('acme'), ('globex')`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	hash := strings.Repeat("ab", 32)
	in := write("in.csv", "email,reason,created_at,email_sha256\n"+
		"Ada@Analytical.Example,unsubscribed,2026-06-05T04:11:00Z,\n"+
		"jorg@bücher.example,bounced,,\n"+
		" alan@bletchley.example ,,2026-06-05T05:40:00.123456Z,\n"+
		",forgotten,2026-01-01T00:00:00Z,"+hash+"\n"+
		"ada@analytical.example,complained,,\n") // already listed: kept as it was
	res := runCLI(t, env, "suppressions", "import", "--workspace", "acme", in)
	if res.code != 0 || !strings.Contains(res.stdout, "imported 5 suppressions into workspace acme: 4 new, 1 already listed") {
		t.Fatalf("import: %+v", res)
	}
	export := func(ws string) string {
		t.Helper()
		res := runCLI(t, env, "suppressions", "export", "--workspace", ws)
		if res.code != 0 {
			t.Fatalf("export %s: %+v", ws, res)
		}
		return res.stdout
	}
	first := export("acme")
	lines := strings.Split(strings.TrimSpace(first), "\n")
	if len(lines) != 5 || lines[0] != "email,email_sha256,reason,created_at" ||
		!strings.HasPrefix(lines[1], ",abab") || !strings.HasSuffix(lines[1], ",forgotten,2026-01-01T00:00:00Z") ||
		!strings.HasPrefix(lines[2], "ada@analytical.example,") || !strings.HasSuffix(lines[2], ",unsubscribed,2026-06-05T04:11:00Z") ||
		!strings.HasPrefix(lines[3], "alan@bletchley.example,") || !strings.HasSuffix(lines[3], ",imported,2026-06-05T05:40:00.123456Z") ||
		!strings.HasPrefix(lines[4], "jorg@xn--bcher-kva.example,") || !strings.Contains(lines[4], ",bounced,") {
		t.Fatalf("export:\n%s", first)
	}
	res = runCLI(t, env, "suppressions", "import", "--workspace", "globex", write("out.csv", first))
	if res.code != 0 || !strings.Contains(res.stdout, "4 new, 0 already listed") {
		t.Fatalf("import the export: %+v", res)
	}
	if second := export("globex"); second != first {
		t.Errorf("round trip changed the list:\n--- acme\n%s--- globex\n%s", first, second)
	}
	// Imported again, piped as the help shows: nothing new.
	if res := runCLIIn(t, env, first, "suppressions", "import", "--workspace", "globex", "-"); res.code != 0 || !strings.Contains(res.stdout, "0 new, 4 already listed") {
		t.Errorf("import twice: %+v", res)
	}
}

// Issue 25: suppressions import has import leads' input rules: every bad
// line reported with its number, then nothing imported (exit 2); a bad
// header, broken quoting, a file over the bound and an unknown workspace
// are exit 2 too.
func TestSuppressionsImportRejectsBadInput(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO workspaces (name) VALUES ('acme')`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	bad := write("bad.csv", "email,reason,email_sha256\n"+
		"ok@example.test,,\n"+
		"not-an-address,,\n"+
		"\u202eevil@example.test,,\n"+
		"x@example.test,Unsubscribed!,\n"+
		"y@example.test,,"+strings.Repeat("00", 32)+"\n"+
		",,\n")
	res := runCLI(t, env, "suppressions", "import", "--workspace", "acme", bad)
	if res.code != exitUsage || !strings.Contains(res.stderr, "5 invalid line(s); nothing was imported") {
		t.Fatalf("bad lines: %+v", res)
	}
	for _, want := range []string{"line 3: email", "line 4: email", "line 5: reason", "line 6: email_sha256 is not the SHA-256", "line 7: no email"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM suppressions`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d suppressions after a failed import (%v), want 0", n, err)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"header":    {[]string{"--workspace", "acme", write("h.csv", "address\nx@y.test\n")}, `unknown column "address"`},
		"quoting":   {[]string{"--workspace", "acme", write("q.csv", "email\n\"x@y.test\n")}, "fix the quoting"},
		"empty":     {[]string{"--workspace", "acme", write("e.csv", "")}, "the file is empty"},
		"workspace": {[]string{"--workspace", "nosuch", write("w.csv", "email\nx@y.test\n")}, `unknown workspace "nosuch"`},
		"missing":   {[]string{"--workspace", "acme", filepath.Join(dir, "nosuch.csv")}, "no such file"},
	} {
		res := runCLI(t, env, append([]string{"suppressions", "import"}, tc.args...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%s: exit %d %s; want 2 and %q", name, res.code, res.stderr, tc.want)
		}
	}
	ios, _, _, _ := cliio.Test()
	opts := &SuppressionsImportOptions{f: newFactory(ios, nil), Workspace: "acme", Output: "text", File: write("big.csv", "email\n"+strings.Repeat("a@b.test\n", 100)), MaxBytes: 64}
	if err := suppressionsImportRun(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "larger than the 64 bytes limit") {
		t.Errorf("a file over the bound: %v", err)
	}
}

// Issue 25: unsubscribe apply uses a token once, as the one-click POST does;
// a used or bad token exits 2 and changes nothing.
func TestUnsubscribeApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	var enrollmentID, ws int64
	err := db.Pool.QueryRow(ctx, `WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		c AS (INSERT INTO campaigns (workspace_id, name) SELECT id, 'q4' FROM w RETURNING id, workspace_id),
		l AS (INSERT INTO leads (workspace_id, first_name, email) SELECT id, 'Ada', 'ada@analytical.example' FROM w RETURNING id, workspace_id)
		INSERT INTO enrollments (campaign_id, lead_id, workspace_id) SELECT c.id, l.id, l.workspace_id FROM c, l RETURNING id, workspace_id`).Scan(&enrollmentID, &ws)
	if err != nil {
		t.Fatal(err)
	}
	key, err := store.UnsubscribeKey(ctx, db.Pool, ws)
	if err != nil {
		t.Fatal(err)
	}
	token := unsubscribe.Sign(key, enrollmentID)
	if res := runCLI(t, env, "unsubscribe", "apply", token); res.code != 0 || res.stdout != "unsubscribed: 1 enrollment(s) ended; the address is now suppressed\n" {
		t.Fatalf("apply: %+v", res)
	}
	for _, tc := range []struct{ token, want string }{
		{token, "used already"},
		{unsubscribe.Sign(make([]byte, unsubscribe.KeySize), enrollmentID), "not valid"},
		{"nope", "not an unsubscribe token"},
	} {
		if res := runCLI(t, env, "unsubscribe", "apply", tc.token); res.code != exitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("apply %q: %+v, want exit 2 and %q", tc.token, res, tc.want)
		}
	}
	var state string
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT status FROM enrollments) || ' ' || (SELECT string_agg(email || '=' || reason, ',') FROM suppressions) || ' ' || (SELECT string_agg(via, ',') FROM unsubscribes)`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "unsubscribed ada@analytical.example=unsubscribed apply" {
		t.Errorf("state = %q", state)
	}
}

// Issue 37, finding 7: `suppressions export` wrote addresses starting with
// = + - as they were, formulas once opened in a spreadsheet; they are
// written after one apostrophe (OWASP) and the import reads them back as
// the same list. A created_at of 0001-01-01 was replaced by now silently;
// it is a line error naming the line and the column, nothing imported.
func TestSuppressionsExportNeutralisesFormulasAndImportRefusesZeroTime(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO workspaces (name) VALUES ('acme'), ('globex')`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	in := write("in.csv", "email,created_at\n=1+2@evil.test,2026-06-05T04:11:00Z\n+cmd@evil.test,2026-06-05T04:12:00Z\n-2+3@evil.test,2026-06-05T04:13:00Z\n")
	if res := runCLI(t, env, "suppressions", "import", "--workspace", "acme", in); res.code != 0 {
		t.Fatalf("import: %+v", res)
	}
	res := runCLI(t, env, "suppressions", "export", "--workspace", "acme")
	if res.code != 0 {
		t.Fatalf("export: %+v", res)
	}
	recs, err := csv.NewReader(strings.NewReader(res.stdout)).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("export (%v):\n%s", err, res.stdout)
	}
	for _, rec := range recs[1:] {
		for _, cell := range rec {
			if cell != "" && strings.ContainsAny(cell[:1], "=+-@\t\r") {
				t.Errorf("export cell %q is a formula in a spreadsheet:\n%s", cell, res.stdout)
			}
		}
	}
	if res := runCLI(t, env, "suppressions", "import", "--workspace", "globex", write("out.csv", res.stdout)); res.code != 0 {
		t.Fatalf("import the export: %+v", res)
	}
	if back := runCLI(t, env, "suppressions", "export", "--workspace", "globex"); back.stdout != res.stdout {
		t.Errorf("round trip changed the list:\n--- acme\n%s--- globex\n%s", res.stdout, back.stdout)
	}

	zero := write("zero.csv", "email,reason,created_at\nok@example.test,,2026-06-05T04:11:00Z\nzero@example.test,,0001-01-01T00:00:00Z\n")
	res = runCLI(t, env, "suppressions", "import", "--workspace", "acme", zero)
	if res.code != exitUsage || !strings.Contains(res.stderr, "line 3: created_at (column 3) \"0001-01-01T00:00:00Z\" is outside 1970-01-01T00:00:00Z to ") {
		t.Errorf("a zero created_at: %+v", res)
	}
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM suppressions WHERE email IN ('ok@example.test', 'zero@example.test')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d of the refused file's addresses suppressed (%v), want 0", n, err)
	}
}
