package suppression

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"
)

// Issue 37, finding 7: the export wrote cells starting with = + - @ as
// they were, which a spreadsheet runs as formulas (CSV injection). Such a
// cell (and one of apostrophes before such a character, so the rule is
// reversible) is written after one apostrophe, as OWASP advises, and the
// import drops exactly that apostrophe.
func TestNeutraliseAndRestore(t *testing.T) {
	t.Parallel()
	for value, written := range map[string]string{
		"=1+2@evil.test":  "'=1+2@evil.test",
		"+cmd@evil.test":  "'+cmd@evil.test",
		"-2+3@evil.test":  "'-2+3@evil.test",
		"@SUM(A1)":        "'@SUM(A1)",
		"\tx":             "'\tx",
		"\rx":             "'\rx",
		"'=x":             "''=x",
		"''-x":            "'''-x",
		"o'brien@x.test":  "o'brien@x.test",
		"'quoted@x.test":  "'quoted@x.test",
		"a=b@x.test":      "a=b@x.test",
		"":                "",
		"'":               "'",
		"2026-06-05T04Z":  "2026-06-05T04Z",
		"unsubscribed":    "unsubscribed",
		"ada@analytic.al": "ada@analytic.al",
	} {
		if got := neutralise(value); got != written {
			t.Errorf("neutralise(%q) = %q, want %q", value, got, written)
		}
		if got := restore(written); got != value {
			t.Errorf("restore(%q) = %q, want %q", written, got, value)
		}
	}
}

// An export line of an address starting with a formula character holds no
// cell a spreadsheet runs, and reads back as the same entry.
func TestExportLineHasNoFormulaAndReadsBack(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 6, 5, 4, 11, 0, 0, time.UTC)
	for _, email := range []string{"=1+2@evil.test", "+cmd@evil.test", "-2+3@evil.test"} {
		var b strings.Builder
		w := csv.NewWriter(&b)
		_ = w.Write(Columns)
		_ = w.Write(exportRecord(email, Hash(email), "unsubscribed", created))
		w.Flush()
		recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, cell := range recs[1] {
			if cell != "" && strings.ContainsRune(formulaLead, rune(cell[0])) {
				t.Errorf("export of %s has the cell %q, a formula in a spreadsheet", email, cell)
			}
		}
		r, err := NewReader(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		e, lineErr, err := r.Next()
		if err != nil || lineErr != nil || e.Email != email || e.Reason != "unsubscribed" || !e.CreatedAt.Equal(created) {
			t.Errorf("export of %s reads back as %+v (%v %v)", email, e, lineErr, err)
		}
	}
}
