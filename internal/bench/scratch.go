// Package bench measures the ticks' pipelines on this machine against a
// scratch schema in a given database: the enrichment claim pipeline (claim
// → a no-op provider → record, through the tick's own code) and the email
// drain (through the tick's own code into an in-process SMTP server, beside
// a bare go-mail loop sending the same messages to the same server).
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// loadTimeout bounds the bulk loads and the schema drop, which take far
// longer than any statement a tick runs.
const loadTimeout = 10 * time.Minute

// scratch is a schema holding a migrated copy of the tables, so a bench
// can run in any database without touching its data.
type scratch struct {
	Name string
	// Pool connects with search_path set to the schema only.
	Pool  *pgxpool.Pool
	admin *pgxpool.Pool
}

// newScratch creates a schema named rindactl_bench_<random> and applies
// the migrations into it. Close drops it.
func newScratch(ctx context.Context, url string) (*scratch, error) {
	admin, err := store.Open(ctx, store.Config{URL: url, MaxConns: 1, StatementTimeout: loadTimeout})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	s := &scratch{Name: "rindactl_bench_" + hex.EncodeToString(b), admin: admin}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{s.Name}.Sanitize()); err != nil {
		admin.Close()
		return nil, fmt.Errorf("creating scratch schema %s (the DATABASE_URL user needs CREATE on the database): %w", s.Name, err)
	}
	if s.Pool, err = schemaPool(ctx, url, s.Name); err != nil {
		return nil, errors.Join(err, s.Close(ctx))
	}
	if _, err := store.Migrate(ctx, s.Pool); err != nil {
		return nil, errors.Join(err, s.Close(ctx))
	}
	return s, nil
}

// schemaPool connects to url with search_path set to schema only.
func schemaPool(ctx context.Context, url, schema string) (*pgxpool.Pool, error) {
	cfg, err := store.ParseConfig(store.Config{URL: url, ApplicationName: "rindactl bench", StatementTimeout: loadTimeout})
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	return pgxpool.NewWithConfig(ctx, cfg)
}

// borrowed is another bench's scratch schema, used in place: Close leaves
// it to its owner.
func borrowed(ctx context.Context, url, schema string) (*scratch, error) {
	pool, err := schemaPool(ctx, url, schema)
	if err != nil {
		return nil, err
	}
	return &scratch{Name: schema, Pool: pool}, nil
}

// Close drops the schema and everything in it (a borrowed one is only
// disconnected).
func (s *scratch) Close(ctx context.Context) error {
	if s.Pool != nil {
		s.Pool.Close()
	}
	if s.admin == nil {
		return nil
	}
	defer s.admin.Close()
	if _, err := s.admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+pgx.Identifier{s.Name}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("dropping scratch schema %s: %w", s.Name, err)
	}
	return nil
}

// analyze refreshes statistics after a bulk load, as autovacuum would
// before a production tick meets the rows.
func (s *scratch) analyze(ctx context.Context, tables ...string) error {
	for _, t := range tables {
		if _, err := s.Pool.Exec(ctx, "VACUUM ANALYZE "+pgx.Identifier{t}.Sanitize()); err != nil {
			return fmt.Errorf("analyzing %s: %w", t, err)
		}
	}
	return nil
}

// count is how many rows table holds.
func (s *scratch) count(ctx context.Context, table string) (int64, error) {
	var n int64
	if err := s.Pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting %s: %w", table, err)
	}
	return n, nil
}
