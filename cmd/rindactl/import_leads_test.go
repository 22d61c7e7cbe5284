package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
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

// Issue 27: "import leads -" reads standard input, as its argument says;
// it was refused as a file named "-".
func TestImportLeadsFromStandardInput(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	csv := "external_id,first_name,last_name,company_domain,email\n1,Ada,Lovelace,analytical.example,\n2,Grace,Hopper,navy.example,grace@navy.example\n"
	res := runCLIIn(t, env, csv, "import", "leads", "--workspace", "acme", "-")
	if res.code != exitOK || !strings.Contains(res.stdout, "imported 2 leads into workspace acme") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 leads imported from stdin", res.code, res.stdout, res.stderr)
	}
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM leads`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d leads (%v), want 2", n, err)
	}
	// A bad line on stdin names standard input, not "-".
	res = runCLIIn(t, env, "external_id,first_name,last_name,company_domain,email\n3,Alan,Turing,,\n", "import", "leads", "--workspace", "acme", "-")
	if res.code != exitUsage || !strings.Contains(res.stderr, "standard input: 1 invalid line(s)") {
		t.Fatalf("bad stdin: exit %d, stderr %q", res.code, res.stderr)
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

func TestLeadFileSizeLimit(t *testing.T) {
	t.Parallel()
	file := writeCSV(t, leadsCSV)
	_, _, err := openLeadFile(file, 64, nil)
	if err == nil || !strings.Contains(err.Error(), "larger than the 64 bytes limit") {
		t.Fatalf("regular file: got %v, want the size limit named", err)
	}
	// A pipe has no size up front: the limit stops the read with an error,
	// never a silent end of file that would import half the lines.
	fifo := filepath.Join(t.TempDir(), "leads.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, _ = w.WriteString(leadsCSV)
			w.Close()
		}
	}()
	rc, _, err := openLeadFile(fifo, 64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	lr, err := enrich.NewLeadReader(rc)
	for err == nil {
		_, _, err = lr.Next()
	}
	if err := leadFileError(fifo, 64, err); !strings.Contains(err.Error(), "larger than the 64 bytes limit") {
		t.Fatalf("pipe: got %v, want the size limit named", err)
	}
}

// A file of exactly the limit is whole: it reads to its end, not to the
// size error the next byte would bring.
func TestLeadFileExactlyAtTheLimitReadsWhole(t *testing.T) {
	t.Parallel()
	file := writeCSV(t, leadsCSV)
	rc, _, err := openLeadFile(file, int64(len(leadsCSV)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil || string(got) != leadsCSV {
		t.Fatalf("read %d of %d bytes, err %v: want the whole file", len(got), len(leadsCSV), err)
	}
}

// Issue 16: a NUL byte is an invalid line like any other: reported with its
// line number (exit 2, nothing imported), and skipped by --skip-invalid,
// never a raw SQLSTATE that aborts the whole import.
func TestImportLeadsNULByteIsAnInvalidLine(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	file := writeCSV(t, "first_name,last_name,company_domain\nAda,Lovelace,analytical.example\nAl\x00an,Turing,bletchley.example\nGrace,Hopper,navy.example\n")

	res := runCLI(t, env, "import", "leads", "--workspace", "acme", file)
	if res.code != exitUsage || !strings.Contains(res.stderr, "line 3: first_name contains a NUL byte") || strings.Contains(res.stderr, "SQLSTATE") {
		t.Fatalf("exit %d, want 2 naming line 3:\n%s", res.code, res.stderr)
	}
	res = runCLI(t, env, "import", "leads", "--workspace", "acme", "--skip-invalid", file)
	if res.code != 0 || !strings.Contains(res.stdout, "2 new") || !strings.Contains(res.stdout, "1 invalid lines skipped") {
		t.Fatalf("--skip-invalid: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// Issue 15/16 (import side): re-importing the same CSV without external_id
// does not create the leads twice, and the import says how many lines it
// merged; addresses are normalised (case, spaces) before they are compared.
func TestImportLeadsTwiceWithoutExternalIDMerges(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	file := writeCSV(t, "first_name,last_name,company_domain,email\n"+
		"Ada,Lovelace,analytical.example, Ada@Analytical.Example \n"+
		"Alan,Turing,bletchley.example,\n"+
		"Grace,Hopper,navy.example,grace@navy.example\n")
	res := runCLI(t, env, "import", "leads", "--workspace", "acme", file)
	if res.code != 0 || !strings.Contains(res.stdout, "3 new, 0 updated, 0 duplicates merged") {
		t.Fatalf("first import: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, env, "import", "leads", "--workspace", "acme", "--output", "json", file)
	var rep struct {
		Inserted int64 `json:"inserted"`
		Merged   int64 `json:"duplicates_merged"`
	}
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &rep) != nil || rep.Inserted != 0 || rep.Merged != 3 {
		t.Fatalf("re-import: exit %d %+v\n%s%s", res.code, rep, res.stdout, res.stderr)
	}
	var n int
	var email string
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*), max(email) FILTER (WHERE first_name = 'Ada') FROM leads`).Scan(&n, &email); err != nil || n != 3 || email != "ada@analytical.example" {
		t.Fatalf("leads = %d, Ada's address %q (%v); want 3 leads and a normalised address", n, email, err)
	}
}

// Issue 16: counts in text output carry thousands separators, like status.
func TestImportLeadsCountsWithThousandsSeparators(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	var b strings.Builder
	b.WriteString("external_id,first_name,last_name,company_domain\n")
	for i := range 1500 {
		fmt.Fprintf(&b, "x-%d,Ada,Lovelace,analytical.example\n", i)
	}
	res := runCLI(t, map[string]string{"DATABASE_URL": db.URL}, "import", "leads", "--workspace", "acme", writeCSV(t, b.String()))
	if res.code != 0 || !strings.Contains(res.stdout, "imported 1,500 leads") || !strings.Contains(res.stdout, "1,500 queued") {
		t.Fatalf("exit %d: %s%s", res.code, res.stdout, res.stderr)
	}
}
