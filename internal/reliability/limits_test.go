package reliability

import (
	"os"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// TestInputLimits feeds the import commands oversized and absurd input and
// checks each is refused with a clear error, before the database is
// touched where the whole file is refused.
func TestInputLimits(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}

	// A lead file over the limit, sparse so the test writes nothing.
	huge := writeFile(t, "huge.csv", "")
	if err := os.Truncate(huge, enrich.ImportMaxBytesDefault+1); err != nil {
		t.Fatal(err)
	}
	if res := rindactl(t, env, "import", "leads", "--workspace", "acme", huge); res.code != 2 || !strings.Contains(res.stderr, "limit") {
		t.Errorf("an oversized lead file: %s", res)
	}

	// Absurd field lengths are rejected per line; the rest imports with
	// --skip-invalid.
	long := strings.Repeat("x", enrich.ImportMaxFieldLen+1)
	csv := "external_id,first_name,last_name,company_domain\nok-1,Ada,Lovelace,analytical.example\nbad-1," + long + ",Lovelace,a.example\n" +
		"bad-2,Ada,\"" + strings.Repeat("y", 5<<20) + "\",b.example\nok-2,Alan,Turing,bletchley.example\n"
	file := writeFile(t, "long.csv", csv)
	res := rindactl(t, env, "import", "leads", "--workspace", "acme", file)
	if res.code != 2 || !strings.Contains(res.stderr, "line 3: first_name is 1001 characters long") || !strings.Contains(res.stderr, "line 4: last_name is 5242880 characters long") {
		t.Errorf("absurd field lengths: %s", res)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM leads`); n != 0 {
		t.Errorf("%d leads imported from a file with invalid lines", n)
	}
	if res := rindactl(t, env, "import", "leads", "--workspace", "acme", "--skip-invalid", file); res.code != 0 || queryInt(t, db, `SELECT count(*) FROM leads`) != 2 {
		t.Errorf("--skip-invalid should import the 2 good lines: %s", res)
	}
	if len(res.stderr) > 10000 {
		t.Errorf("the error report echoes the absurd values (%d bytes)", len(res.stderr))
	}

	// Campaign files: over the size limit (from a file and from stdin), and
	// an alias bomb that would expand to gigabytes.
	big := "workspace: acme\nname: q4\n# " + strings.Repeat("z", sequence.CampaignFileMaxBytesDefault) + "\n"
	if res := rindactl(t, env, "import", "campaign", writeFile(t, "big.yaml", big)); res.code == 0 || !strings.Contains(res.stderr, "larger than") {
		t.Errorf("an oversized campaign file: %s", res)
	}
	if res := rindactlIn(t, env, []byte(big), "import", "campaign", "-"); res.code == 0 || !strings.Contains(res.stderr, "larger than") {
		t.Errorf("an oversized campaign on stdin: %s", res)
	}
	bomb := "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	for i, prev := 'b', 'a'; i <= 'i'; i, prev = i+1, i {
		bomb += string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(prev)+",", 8) + "*" + string(prev) + "]\n"
	}
	if res := rindactl(t, env, "import", "campaign", writeFile(t, "bomb.yaml", bomb)); res.code == 0 || len(res.stderr) > 2000 {
		t.Errorf("a YAML alias bomb: %s", res)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM campaigns`); n != 0 {
		t.Errorf("%d campaigns written from refused files", n)
	}
}
