package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/rindactl/rindactl/internal/address"
)

// canonicalAddressesVersion is the goose version of the migration that
// rewrites stored addresses in their canonical spelling (issue 25). It is
// Go, not SQL: Postgres has no IDNA, and the spelling must be exactly the
// one address.Canonical gives new rows. No SQL migration may take this
// number (goose refuses a duplicate version).
const canonicalAddressesVersion = 13

// goMigrations are the migrations written in Go, beside the embedded SQL
// ones, with the file-like name `migrate status` shows for each.
var goMigrations = []struct {
	name    string
	version int64
	up      func(context.Context, *sql.Tx) error
}{
	{"00013_canonical_addresses.go", canonicalAddressesVersion, rewriteAddresses},
}

// goMigration builds a fresh goose migration per provider (goose links the
// ones it is given). Down keeps what up wrote: canonical spellings are
// valid addresses.
func goMigration(version int64, up func(context.Context, *sql.Tx) error) *goose.Migration {
	return goose.NewGoMigration(version, &goose.GoFunc{RunTx: up}, &goose.GoFunc{Mode: goose.TransactionEnabled})
}

// GoMigrationNames lists the Go migrations, for the test harness's
// template fingerprint.
func GoMigrationNames() []string {
	names := make([]string, len(goMigrations))
	for i, m := range goMigrations {
		names[i] = m.name
	}
	return names
}

func goMigrationName(version int64) string {
	for _, m := range goMigrations {
		if m.version == version {
			return m.name
		}
	}
	return ""
}

// addressRewriteBatch bounds each rewriting statement's arrays.
const addressRewriteBatch = 10_000

// notCanonicalSQL selects the rows whose address may not be canonical:
// anything beyond lower-case printable ASCII, or a trailing dot. A
// lower-case ASCII address is its own canonical spelling (or has none, and
// stays as it is: the email tick refuses to mail it).
const notCanonicalSQL = `email <> lower(email) OR email ~ '[^!-~]' OR email LIKE '%.'`

// rewriteAddresses rewrites leads.email, suppressions and
// campaign_recipients in canonical spellings. Two rows of one key that
// become one spelling (jorg@bücher.example and jorg@xn--bcher-kva.example)
// are merged: the older suppression stays, and the address stays with the
// enrollment that mailed it first (the other one ends as a duplicate at its
// next send). Addresses without a canonical spelling are left as they are.
func rewriteAddresses(ctx context.Context, tx *sql.Tx) error {
	if err := rewriteLeadAddresses(ctx, tx); err != nil {
		return fmt.Errorf("canonical addresses in leads: %w", err)
	}
	if err := rewriteKeyedAddresses(ctx, tx, suppressionKeys); err != nil {
		return fmt.Errorf("canonical addresses in suppressions: %w", err)
	}
	if err := rewriteKeyedAddresses(ctx, tx, recipientKeys); err != nil {
		return fmt.Errorf("canonical addresses in campaign_recipients: %w", err)
	}
	return nil
}

func rewriteLeadAddresses(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, email FROM leads WHERE email IS NOT NULL AND (`+notCanonicalSQL+`)`)
	if err != nil {
		return err
	}
	var ids []int64
	var emails []string
	for rows.Next() {
		var id int64
		var email string
		if err := rows.Scan(&id, &email); err != nil {
			rows.Close()
			return err
		}
		if c, err := address.Canonical(email); err == nil && c != email {
			ids, emails = append(ids, id), append(emails, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for from := 0; from < len(ids); from += addressRewriteBatch {
		to := min(from+addressRewriteBatch, len(ids))
		if _, err := tx.ExecContext(ctx, `UPDATE leads l SET email = u.email, updated_at = now()
			FROM unnest($1::bigint[], $2::text[]) AS u (id, email) WHERE l.id = u.id`, ids[from:to], emails[from:to]); err != nil {
			return err
		}
	}
	return nil
}

// keyedTable is a table whose primary key is (scope, email).
type keyedTable struct {
	table, scope string
	// rankSQL reads, for rows given as (scope, email) arrays $1 and $2,
	// each row's rank: the row ranked first keeps the address.
	rankSQL string
}

var suppressionKeys = keyedTable{table: "suppressions", scope: "workspace_id", rankSQL: `
	SELECT s.workspace_id, s.email, s.created_at, 0::bigint
	FROM suppressions s JOIN unnest($1::bigint[], $2::text[]) AS k (scope, email)
	  ON s.workspace_id = k.scope AND s.email = k.email`}

// A recipient's rank is its enrollment's first send that was not refused.
var recipientKeys = keyedTable{table: "campaign_recipients", scope: "campaign_id", rankSQL: `
	SELECT r.campaign_id, r.email,
	       coalesce((SELECT min(s.created_at) FROM sends s WHERE s.enrollment_id = r.enrollment_id AND s.status <> 'failed'), '9999-12-31'::timestamptz),
	       r.enrollment_id
	FROM campaign_recipients r JOIN unnest($1::bigint[], $2::text[]) AS k (scope, email)
	  ON r.campaign_id = k.scope AND r.email = k.email`}

type keyedRow struct {
	scope int64
	email string
	at    time.Time
	tie   int64
}

type addressKey struct {
	scope int64
	email string
}

func rewriteKeyedAddresses(ctx context.Context, tx *sql.Tx, kt keyedTable) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+kt.scope+`, email FROM `+kt.table+` WHERE `+notCanonicalSQL)
	if err != nil {
		return err
	}
	type rewrite struct {
		from      addressKey
		canonical string
	}
	var todo []rewrite
	for rows.Next() {
		var k addressKey
		if err := rows.Scan(&k.scope, &k.email); err != nil {
			rows.Close()
			return err
		}
		if c, err := address.Canonical(k.email); err == nil && c != k.email {
			todo = append(todo, rewrite{k, c})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// Batch after batch: a group split over two batches is merged in the
	// second, which finds the first one's row already spelled as the key.
	for from := 0; from < len(todo); from += addressRewriteBatch {
		canonical := map[addressKey]string{}
		for _, r := range todo[from:min(from+addressRewriteBatch, len(todo))] {
			canonical[r.from] = r.canonical
		}
		if err := mergeAddressGroups(ctx, tx, kt, canonical); err != nil {
			return err
		}
	}
	return nil
}

// mergeAddressGroups rewrites the rows of canonical (a row's key -> its
// canonical spelling): in each group of rows sharing a canonical key, the
// first ranked keeps the address, spelled canonically; the others go.
func mergeAddressGroups(ctx context.Context, tx *sql.Tx, kt keyedTable, canonical map[addressKey]string) error {
	var scopes []int64
	var emails []string
	for k, c := range canonical {
		scopes, emails = append(scopes, k.scope, k.scope), append(emails, k.email, c)
	}
	ranked, err := tx.QueryContext(ctx, kt.rankSQL, scopes, emails)
	if err != nil {
		return err
	}
	groups := map[addressKey][]keyedRow{}
	for ranked.Next() {
		var r keyedRow
		if err := ranked.Scan(&r.scope, &r.email, &r.at, &r.tie); err != nil {
			ranked.Close()
			return err
		}
		c, ok := canonical[addressKey{r.scope, r.email}]
		if !ok {
			c = r.email // already spelled as the key
		}
		g := addressKey{r.scope, c}
		groups[g] = append(groups[g], r)
	}
	ranked.Close()
	if err := ranked.Err(); err != nil {
		return err
	}
	var delScopes, updScopes []int64
	var delEmails, updFrom, updTo []string
	for g, rs := range groups {
		slices.SortFunc(rs, func(a, b keyedRow) int {
			return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.tie, b.tie), cmp.Compare(a.email, b.email))
		})
		for _, r := range rs[1:] {
			delScopes, delEmails = append(delScopes, r.scope), append(delEmails, r.email)
		}
		if keep := rs[0]; keep.email != g.email {
			updScopes, updFrom, updTo = append(updScopes, keep.scope), append(updFrom, keep.email), append(updTo, g.email)
		}
	}
	// Deletes first: the row spelled as the key may be one of them.
	if len(delScopes) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+kt.table+` t USING unnest($1::bigint[], $2::text[]) AS d (scope, email)
			WHERE t.`+kt.scope+` = d.scope AND t.email = d.email`, delScopes, delEmails); err != nil {
			return err
		}
	}
	if len(updScopes) > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE `+kt.table+` t SET email = u.canonical
			FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u (scope, email, canonical)
			WHERE t.`+kt.scope+` = u.scope AND t.email = u.email`, updScopes, updFrom, updTo); err != nil {
			return err
		}
	}
	return nil
}

// RewriteAddresses does the migration's work again, in one transaction: for
// rows written around the application (hand-written SQL, tests seeding
// legacy spellings).
func RewriteAddresses(ctx context.Context, pool *pgxpool.Pool) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := rewriteAddresses(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
