package store_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 41: the email claim scanned its 18 columns by position, so two
// same-typed columns swapped in the RETURNING list (first_name and
// last_name, suppressed and step_send) would fill each other's fields. It
// scans by name now (pgx.RowToStructByName): every field of
// ClaimedEnrollment names, in its db tag, a column the claim returns, and
// every column has its field.
func TestEmailClaimColumnsAreTheFieldsNames(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	sql, _, err := pgx.NamedArgs{}.RewriteQuery(ctx, nil, store.EmailClaimSQL, nil)
	if err != nil {
		t.Fatal(err)
	}
	sd, err := conn.Conn().Prepare(ctx, "", sql)
	if err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, f := range sd.Fields {
		columns = append(columns, f.Name)
	}
	typ := reflect.TypeFor[store.ClaimedEnrollment]()
	var fields []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, ok := f.Tag.Lookup("db")
		if !ok {
			t.Errorf("ClaimedEnrollment.%s has no db tag naming its column", f.Name)
			continue
		}
		if !slices.Contains(columns, tag) {
			t.Errorf("ClaimedEnrollment.%s is tagged db:%q, which email_claim.sql does not return (it returns %v)", f.Name, tag, columns)
		}
		fields = append(fields, tag)
	}
	for _, c := range columns {
		if !slices.Contains(fields, c) {
			t.Errorf("email_claim.sql returns %q, which no field of ClaimedEnrollment is tagged with", c)
		}
	}
}
