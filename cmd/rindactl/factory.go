package main

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Factory hands commands what they need from the outside world. Tests build
// one over buffers and a chosen environment.
type Factory struct {
	IO     *cliio.IO
	Getenv func(string) string
	Now    func() time.Time

	// Set from global flags before any command runs.
	DatabaseURL string
	LogFormat   string
	LogLevel    string

	logger *slog.Logger
	// rindabench finds the binary `demo` and `bench` run (bench.go); tests
	// give one they built.
	rindabench func() (string, error)
}

func newFactory(ios *cliio.IO, getenv func(string) string) *Factory {
	return &Factory{IO: ios, Getenv: getenv, Now: time.Now, rindabench: findRindabench}
}

// Logger writes JSON lines (or text on a terminal) to stderr.
func (f *Factory) Logger() *slog.Logger {
	if f.logger == nil {
		f.logger = newLogger(f.IO.ErrOut, f.LogFormat, f.LogLevel, f.IO.IsStderrTTY())
	}
	return f.logger
}

// OpenDB connects to the configured database with the safety settings of
// store.Open (statement and lock timeouts on every connection).
func (f *Factory) OpenDB(ctx context.Context) (*pgxpool.Pool, error) {
	if err := f.CheckDatabaseURL(); err != nil {
		return nil, err
	}
	return store.Open(ctx, store.Config{URL: f.DatabaseURL})
}

// OpenTickDB connects as OpenDB does for a tick of kind: its connections
// are named "rindactl <kind>" (pg_stat_activity's application_name) and
// the pool is bounded by store.TickMaxConns.
func (f *Factory) OpenTickDB(ctx context.Context, kind tickkind.Kind) (*pgxpool.Pool, error) {
	if err := f.CheckDatabaseURL(); err != nil {
		return nil, err
	}
	return store.Open(ctx, store.Config{URL: f.DatabaseURL, MaxConns: store.TickMaxConns(kind), ApplicationName: "rindactl " + string(kind)})
}

// CheckDatabaseURL reports a missing or unparsable database URL as a
// configuration error (exit 2): retrying cannot fix it, unlike an
// unreachable server (exit 1).
func (f *Factory) CheckDatabaseURL() error {
	if _, err := store.ParseConfig(store.Config{URL: f.DatabaseURL}); err != nil {
		return &codedError{code: exitUsage, err: err}
	}
	return nil
}

// LookupEnv reads an environment variable through the factory, so tests
// control it; an empty value counts as unset.
func (f *Factory) LookupEnv(key string) (string, bool) { v := f.Getenv(key); return v, v != "" }

func newLogger(w io.Writer, format, level string, tty bool) *slog.Logger {
	var lvl slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lvl = slog.LevelDebug
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		lvl = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lvl}
	// Every line passes through redact: no secret the process knows, in
	// any form, and no value longer than redact.StoredMax reaches stderr.
	if format == "text" || (format == "" && tty) {
		return slog.New(redact.Handler(slog.NewTextHandler(w, opts)))
	}
	return slog.New(redact.Handler(slog.NewJSONHandler(w, opts)))
}

// registerSecrets tells redact about the secrets the process holds from
// the start: the database password (in the URL or PGPASSWORD). The others
// are registered where they are read (SMTP and IMAP passwords, provider
// keys, the Slack webhook, Pushgateway credentials).
func registerSecrets(databaseURL string, getenv func(string) string) {
	redact.Register(getenv("PGPASSWORD"))
	if u, err := url.Parse(databaseURL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			redact.Register(p)
		}
	}
}
