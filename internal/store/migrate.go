package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	schema "github.com/rindactl/rindactl/sql"
)

// MigrationState is one migration's version and whether it is applied.
type MigrationState struct {
	Version int64  `json:"version"`
	Name    string `json:"name"`
	Applied bool   `json:"applied"`
}

// migrator builds a goose provider over the embedded migrations. The session
// locker takes a Postgres advisory lock, so concurrent `rindactl migrate`
// runs (several hosts deploying at once) serialise instead of colliding.
func migrator(pool *pgxpool.Pool) (*goose.Provider, *sql.DB, error) {
	migrations, err := fs.Sub(schema.Migrations, "migrations")
	if err != nil {
		return nil, nil, err
	}
	// Retry the lock every second for up to 5 minutes: a concurrent migrate
	// finishes in well under that, and waiting runs should not idle 5 s.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, nil, err
	}
	db := stdlib.OpenDBFromPool(pool)
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations, goose.WithSessionLocker(locker))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return p, db, nil
}

// Migrate applies every pending migration and returns the versions it
// applied (none when the schema is current).
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]MigrationState, error) {
	p, db, err := migrator(pool)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	applied := make([]MigrationState, 0, len(results))
	for _, r := range results {
		applied = append(applied, MigrationState{Version: r.Source.Version, Name: sourceName(r.Source), Applied: true})
	}
	return applied, nil
}

// MigrationStatus lists every known migration and whether it is applied.
func MigrationStatus(ctx context.Context, pool *pgxpool.Pool) ([]MigrationState, error) {
	p, db, err := migrator(pool)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	out := make([]MigrationState, 0, len(st))
	for _, s := range st {
		out = append(out, MigrationState{Version: s.Source.Version, Name: sourceName(s.Source), Applied: s.State == goose.StateApplied})
	}
	return out, nil
}

// Pending reports how many migrations are not applied yet.
func Pending(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	st, err := MigrationStatus(ctx, pool)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range st {
		if !s.Applied {
			n++
		}
	}
	return n, nil
}

func sourceName(s *goose.Source) string {
	if s == nil {
		return ""
	}
	return path.Base(s.Path)
}
