package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/pgtmp"
	"github.com/rindactl/rindactl/internal/store"
)

// database is where one demo runs: a throwaway cluster, or a scratch
// database on the server DATABASE_URL names. close removes it.
type database struct {
	URL   string
	Where string
	close func(ctx context.Context) error
}

// openDatabase starts a throwaway cluster when serverURL is empty, else
// creates a scratch database on that server (the URL's user must be allowed
// to CREATE DATABASE). keep leaves a scratch database in place.
func openDatabase(ctx context.Context, serverURL string, keep bool, logf func(string, ...any)) (*database, error) {
	if serverURL == "" {
		c, err := pgtmp.Start(ctx, pgtmp.Options{Log: logf})
		if err != nil {
			return nil, fmt.Errorf("starting a throwaway Postgres: %w (or set DATABASE_URL to a server where you may create databases)", err)
		}
		return &database{
			URL: c.URL, Where: fmt.Sprintf("throwaway Postgres on 127.0.0.1:%d", c.Port),
			close: func(context.Context) error { return c.Stop() },
		}, nil
	}

	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("DATABASE_URL is not a postgres:// URL: set it to postgres://user@host:port/dbname, or unset it to use a throwaway Postgres")
	}
	name := "rindactl_demo_" + randomHex(4)
	admin, err := store.Open(ctx, store.Config{URL: serverURL, MaxConns: 1})
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("creating scratch database %s (the DATABASE_URL user needs CREATEDB): %v", name, err)
	}
	scratch := *u
	scratch.Path = "/" + name
	db := &database{URL: scratch.String(), Where: fmt.Sprintf("scratch database %s on %s", name, u.Host)}
	db.close = func(ctx context.Context) error {
		if keep {
			logf("kept scratch database %s (drop it with: DROP DATABASE %s)", name, name)
			return nil
		}
		conn, err := store.Open(ctx, store.Config{URL: serverURL, MaxConns: 1})
		if err != nil {
			return fmt.Errorf("dropping scratch database %s: %w", name, err)
		}
		defer conn.Close()
		// FORCE ends connections a killed child may have left behind.
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("dropping scratch database %s: %v", name, err)
		}
		return nil
	}
	return db, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
