// Package enrichtest seeds leads for tests through production's path: the
// lead CSV reader and enrich.ImportLeads, as `rindactl import leads` runs
// them.
package enrichtest

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/store"
)

// ImportLeads imports leads into workspace as `rindactl import leads`
// imports a CSV file of them (a lead's Line is its place in the file).
// A line the reader refuses, a repeated external_id included, fails the
// import: nothing is imported.
func ImportLeads(ctx context.Context, pool *pgxpool.Pool, workspace string, leads []store.LeadImport) (store.LeadImportResult, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"external_id", "first_name", "last_name", "company", "company_domain", "email", "timezone"})
	for _, l := range leads {
		_ = w.Write([]string{l.ExternalID, l.FirstName, l.LastName, l.Company, l.Domain, l.Email, l.Timezone})
	}
	w.Flush()
	lr, err := enrich.NewLeadReader(&b)
	if err != nil {
		return store.LeadImportResult{}, err
	}
	rep, err := enrich.ImportLeads(ctx, pool, workspace, lr, enrich.ImportOptions{})
	var invalid *enrich.InvalidLinesError
	if errors.As(err, &invalid) && len(rep.Invalid) > 0 {
		err = fmt.Errorf("%w: %v", err, rep.Invalid[0])
	}
	return rep.LeadImportResult, err
}
