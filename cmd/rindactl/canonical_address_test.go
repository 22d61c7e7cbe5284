package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 25, finding 6: one person, two spellings, mailed once. The IDN
// domain in Unicode and in Punycode, NFC and NFD spellings of zoë are one
// lead each, mailed once; an address opening with U+202E is refused with
// its line. (A suppression of one spelling covering the other:
// TestSuppressionCoversEverySpelling in internal/sequence.)
func TestOnePersonTwoSpellingsMailedOnce(t *testing.T) {
	t.Parallel()
	db, srv, env := emailCampaignSetup(t)
	csv := filepath.Join(t.TempDir(), "leads.csv")
	os.WriteFile(csv, []byte("first_name,last_name,company_domain,email\n"+
		"Jorg,A,buecher.test,jorg@bücher.example\n"+
		"Jorg,A,buecher.test,JORG@xn--bcher-kva.example\n"+
		"Zoe,B,zoe.test,zo\u00eb@example.com\n"+
		"Zoe,B,zoe.test,zoe\u0308@example.com\n"+
		"Eve,C,eve.test,\u202eeve@example.com\n"+
		"Ana,D,ana.test,ana@xn--mnchen-3ya.example\n"), 0o600)
	res := runCLI(t, env, "import", "leads", "--workspace", "acme", csv)
	if res.code != exitUsage || !strings.Contains(res.stderr, "line 6") || !strings.Contains(res.stderr, "U+202E") {
		t.Fatalf("import = %+v, want line 6 refused for its U+202E (exit 2)", res)
	}
	if res := runCLI(t, env, "import", "leads", "--workspace", "acme", "--skip-invalid", csv); res.code != 0 {
		t.Fatalf("import --skip-invalid = %+v", res)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != 0 || !strings.Contains(res.stdout, "enrolled 3 leads") {
		t.Fatalf("enroll = %+v, want 3 leads (jörg, zoë, ana)", res)
	}
	if res := runCLI(t, env, "email", "tick"); res.code != 0 {
		t.Fatalf("email tick = %+v", res)
	}
	perAddress := map[string]int{}
	for _, m := range srv.Messages() {
		perAddress[m.To[0]]++
	}
	if len(perAddress) != 2 || perAddress["jorg@xn--bcher-kva.example"] != 1 || perAddress["ana@xn--mnchen-3ya.example"] != 1 {
		t.Errorf("messages per address = %v, want jörg once (A-label) and ana once", perAddress)
	}
	// zoë's local part is UTF-8 and this server lacks SMTPUTF8: her one
	// enrollment fails, saying so.
	var zoe string
	if err := db.Pool.QueryRow(context.Background(), `SELECT string_agg(e.status || ': ' || e.last_error, ' | ') FROM enrollments e
		JOIN leads l ON l.id = e.lead_id WHERE l.first_name = 'Zoe'`).Scan(&zoe); err != nil || !strings.HasPrefix(zoe, "failed: ") || !strings.Contains(zoe, "SMTPUTF8") || strings.Contains(zoe, "|") {
		t.Errorf("zoë's enrollments: %q (%v), want one, failed naming SMTPUTF8", zoe, err)
	}
	var leads int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM leads`).Scan(&leads); err != nil || leads != 3 {
		t.Errorf("%d leads (%v), want 3: two spellings are one lead", leads, err)
	}
}
