package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

func writeCSV(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "leads.csv")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const leadsCSV = "external_id,first_name,last_name,company_domain,email\n" +
	"1,Ada,Lovelace,analytical.example,\n" +
	"2,Alan,Turing,,\n" +
	"3,Grace,Hopper,navy.example,grace@navy.example\n" +
	"4,Edsger,Dijkstra,tue.example,not-an-email\n"

func TestImportLeadsBadLinesImportNothing(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	file := writeCSV(t, leadsCSV)

	res := runCLI(t, env, "import", "leads", "--workspace", "acme", file)
	if res.code != exitUsage {
		t.Fatalf("exit %d, want 2; stderr:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"line 3: no email and no company_domain", `line 5: email "not-an-email"`, "2 invalid line(s); nothing was imported"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM leads) + (SELECT count(*) FROM workspaces)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows written (%v), want none", n, err)
	}

	res = runCLI(t, env, "import", "leads", "--workspace", "acme", "--skip-invalid", "--output", "json", file)
	if res.code != exitOK {
		t.Fatalf("--skip-invalid exit %d: %s", res.code, res.stderr)
	}
	var rep struct {
		Inserted, Queued int
		Invalid          []struct{ Line int }
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, res.stdout)
	}
	if rep.Inserted != 2 || rep.Queued != 1 || len(rep.Invalid) != 2 || rep.Invalid[0].Line != 3 {
		t.Fatalf("report %+v: want 2 imported, 1 queued, lines 3 and 5 reported", rep)
	}
	// Re-importing updates, never duplicates.
	res = runCLI(t, env, "import", "leads", "--workspace", "acme", "--skip-invalid", file)
	if res.code != exitOK || !strings.Contains(res.stdout, "0 new, 2 updated") {
		t.Fatalf("re-import: exit %d, stdout %q", res.code, res.stdout)
	}
}

func TestImportLeadsUsageErrors(t *testing.T) {
	t.Parallel()
	file := writeCSV(t, "first_name,last_name,company_domain,phone\nA,B,c.example,1\n")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "leads", file}, exitUsage, "--workspace is required"},
		{[]string{"import", "leads", "--workspace", "bad name", file}, exitUsage, "invalid --workspace"},
		{[]string{"import", "leads", "--workspace", "acme", "/no/such/file.csv"}, exitUsage, "no such file"},
		{[]string{"import", "leads", "--workspace", "acme", file}, exitUsage, `unknown column "phone"`},
	}
	for _, tc := range cases {
		res := runCLI(t, map[string]string{}, tc.args...)
		if res.code != tc.code || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d stderr %q; want exit %d mentioning %q", tc.args, res.code, res.stderr, tc.code, tc.want)
		}
	}
}

func TestReadLeadFileSizeLimit(t *testing.T) {
	t.Parallel()
	file := writeCSV(t, leadsCSV)
	_, err := readLeadFile(file, 64)
	if err == nil || !strings.Contains(err.Error(), "larger than the 64 bytes limit") {
		t.Fatalf("got %v, want the size limit named", err)
	}
}
