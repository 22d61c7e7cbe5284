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
	opts := []goose.ProviderOption{goose.WithSessionLocker(locker)}
	for _, m := range goMigrations {
		opts = append(opts, goose.WithGoMigrations(goMigration(m.version, m.up)))
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations, opts...)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return p, db, nil
}

// Migrate applies every pending migration and returns the versions it
// applied (none when the schema is current).
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]MigrationState, error) {
	return withMigrator(pool, "migrate", func(p *goose.Provider) ([]*goose.MigrationResult, error) { return p.Up(ctx) },
		func(r *goose.MigrationResult) MigrationState {
			return MigrationState{Version: r.Source.Version, Name: sourceName(r.Source), Applied: true}
		})
}

// MigrationStatus lists every known migration and whether it is applied.
func MigrationStatus(ctx context.Context, pool *pgxpool.Pool) ([]MigrationState, error) {
	return withMigrator(pool, "migration status", func(p *goose.Provider) ([]*goose.MigrationStatus, error) { return p.Status(ctx) },
		func(s *goose.MigrationStatus) MigrationState {
			return MigrationState{Version: s.Source.Version, Name: sourceName(s.Source), Applied: s.State == goose.StateApplied}
		})
}

// withMigrator runs one goose step (what, in its error) on a migrator over
// pool and turns each migration it reports into a MigrationState.
func withMigrator[R any](pool *pgxpool.Pool, what string, step func(*goose.Provider) ([]R, error), state func(R) MigrationState) ([]MigrationState, error) {
	p, db, err := migrator(pool)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rs, err := step(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := make([]MigrationState, 0, len(rs))
	for _, r := range rs {
		out = append(out, state(r))
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
	switch {
	case s == nil:
		return ""
	case s.Path == "":
		return goMigrationName(s.Version)
	}
	return path.Base(s.Path)
}
