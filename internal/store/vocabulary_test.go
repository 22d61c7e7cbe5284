package store_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// checkLiteral is one value of an `IN (...)` CHECK as Postgres prints it.
var checkLiteral = regexp.MustCompile(`'([^']*)'::text`)

// TestCheckConstraintsMatchDomainTypes compares, both ways, the values the
// migrated schema's CHECK constraints allow with the Go types' lists: a
// status added to one side only fails here, not in production.
func TestCheckConstraintsMatchDomainTypes(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	cases := []struct {
		constraint, table string
		words             []string
	}{
		{"lead_enrichment_status_check", "lead_enrichment", words(lead.Statuses)},
		{"enrollments_status_check", "enrollments", words(enrollment.Statuses)},
		{"sends_status_check", "sends", words(enrollment.SendStatuses)},
		{"tick_runs_kind_check", "tick_runs", words(tickkind.All)},
	}
	for _, c := range cases {
		var def string
		err := db.Pool.QueryRow(context.Background(), `SELECT pg_get_constraintdef(oid) FROM pg_constraint
			WHERE conname = $1 AND conrelid = $2::regclass AND contype = 'c'`, c.constraint, c.table).Scan(&def)
		if err != nil {
			t.Errorf("%s on %s: %v", c.constraint, c.table, err)
			continue
		}
		var allowed []string
		for _, m := range checkLiteral.FindAllStringSubmatch(def, -1) {
			allowed = append(allowed, m[1])
		}
		if len(allowed) == 0 {
			t.Errorf("%s: no values in %q", c.constraint, def)
		}
		for _, v := range allowed {
			if !slices.Contains(c.words, v) {
				t.Errorf("%s allows %q, which the Go type does not list", c.constraint, v)
			}
		}
		for _, w := range c.words {
			if !slices.Contains(allowed, w) {
				t.Errorf("the Go type lists %q, which %s refuses (%s)", w, c.constraint, def)
			}
		}
	}
}

func words[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}
