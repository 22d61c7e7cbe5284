// Package storetest gives each test its own migrated Postgres database.
//
// It uses DATABASE_URL when set (a superuser on a disposable server: `make
// test` provides one); otherwise TestMain starts a throwaway cluster for the
// package. Each test database is a clone of a migrated template, so a test
// pays for CREATE DATABASE, not for the migrations.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/pgtmp"
	"github.com/rindactl/rindactl/internal/store"
	schema "github.com/rindactl/rindactl/sql"
)

// adminURL is the server every test database is created on; set by Main.
var (
	adminURL     string
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// Main wraps testing.M: it starts a throwaway cluster when DATABASE_URL is
// unset and stops it after the tests. Use it from TestMain.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit, for a TestMain that must clean up after
// the tests: it returns the exit code.
func Run(m *testing.M) int {
	adminURL = os.Getenv("DATABASE_URL")
	if adminURL == "" {
		c, err := pgtmp.Start(context.Background(), pgtmp.Options{InstallIfMissing: os.Getenv("CI") != ""})
		if err != nil {
			fmt.Fprintln(os.Stderr, "storetest:", err)
			return 1
		}
		defer c.Stop()
		adminURL = c.URL
	}
	return m.Run()
}

// DB is one test's database.
type DB struct {
	// Pool connects as the superuser: for seeding and for operator commands.
	Pool *pgxpool.Pool
	// URL connects to this test's database (for subprocesses).
	URL  string
	Name string
}

// TickRole is the least-privilege role from sql/roles.sql.
const TickRole = "rindactl_tick"

// TickURL connects to this test's database as the least-privilege tick role,
// so tick tests prove the ticks need no more than sql/roles.sql grants.
func (db *DB) TickURL() string {
	u, err := url.Parse(db.URL)
	if err != nil {
		return db.URL
	}
	u.User = url.User(TickRole)
	return u.String()
}

// TickPool opens a pool as the tick role, closed when t ends.
func (db *DB) TickPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := store.Open(context.Background(), store.Config{URL: db.TickURL(), MaxConns: 10})
	if err != nil {
		t.Fatalf("storetest: open as %s: %v", TickRole, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// New creates a fresh migrated database for t and drops it when t ends.
func New(t testing.TB) *DB {
	t.Helper()
	if adminURL == "" {
		t.Fatal("storetest: call storetest.Main(m) from TestMain")
	}
	ctx := context.Background()
	templateOnce.Do(func() { templateName, templateErr = ensureTemplate(ctx) })
	if templateErr != nil {
		t.Fatalf("storetest: template database: %v", templateErr)
	}

	name := "t_" + randomHex(8)
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatalf("storetest: connect admin: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{templateName}.Sanitize()+cloneStrategy(ctx, admin)); err != nil {
		t.Fatalf("storetest: create database: %v", err)
	}
	dbURL := WithDatabase(adminURL, name)
	pool, err := store.Open(ctx, store.Config{URL: dbURL, MaxConns: 10})
	if err != nil {
		t.Fatalf("storetest: open: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		c, err := pgx.Connect(context.Background(), adminURL)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return &DB{Pool: pool, URL: dbURL, Name: name}
}

// cloneStrategy is the clause that copies the template's files as they
// are. From Postgres 15 CREATE DATABASE defaults to WAL_LOG, which reads
// and WAL-logs every block: about 0.9 s per clone of the 9 MB template on a
// busy 2-core machine against about 0.3 s for FILE_COPY, and the suite
// clones one per test. Older servers only copy files and take no clause.
func cloneStrategy(ctx context.Context, admin *pgx.Conn) string {
	strategyOnce.Do(func() {
		var version int
		if admin.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version) == nil && version >= 150000 {
			strategy = " STRATEGY FILE_COPY"
		}
	})
	return strategy
}

var (
	strategyOnce sync.Once
	strategy     string
)

// ensureTemplate creates the migrated template once per schema version. An
// advisory lock makes concurrent test binaries (go test runs packages in
// parallel) build it once.
func ensureTemplate(ctx context.Context) (string, error) {
	name := "rindactl_tpl_" + migrationsHash()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(7042001)"); err != nil {
		return "", err
	}
	defer conn.Exec(ctx, "SELECT pg_advisory_unlock(7042001)")

	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_building"
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{building}.Sanitize()+" WITH (FORCE)")
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{building}.Sanitize()); err != nil {
		return "", err
	}
	pool, err := store.Open(ctx, store.Config{URL: WithDatabase(adminURL, building), StatementTimeout: 2 * time.Minute})
	if err != nil {
		return "", err
	}
	_, err = store.Migrate(ctx, pool)
	if err == nil {
		_, err = pool.Exec(ctx, schema.Roles)
	}
	pool.Close()
	if err != nil {
		return "", err
	}
	// Renaming last means a half-built template is never used.
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{building}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	return name, nil
}

func migrationsHash() string {
	h := sha256.New()
	_ = fs.WalkDir(schema.Migrations, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(schema.Migrations, p)
		h.Write([]byte(p))
		h.Write(b)
		return nil
	})
	h.Write([]byte(schema.Roles))
	for _, name := range store.GoMigrationNames() {
		h.Write([]byte(name))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// WithDatabase returns u with its database name replaced.
func WithDatabase(u, db string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	parsed.Path = "/" + db
	return parsed.String()
}

// AdminURL is the server's superuser URL (for tests that create roles).
func AdminURL() string { return adminURL }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}
