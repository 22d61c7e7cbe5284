// Package store owns the connection to Postgres: the pool and its safety
// settings, migrations, and the queries ticks run. Queries live one per file
// under queries/ and are embedded, so SQL is reviewed as SQL.
package store

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/tickkind"
)

// Defaults for the per-connection safety settings. A tick must never hang on
// a lock a requeue or another tick holds, nor on a runaway statement.
const (
	StatementTimeoutDefault = 30 * time.Second
	LockTimeoutDefault      = 5 * time.Second
	ConnectTimeoutDefault   = 5 * time.Second
	MaxConnsDefault         = 8
	// BackgroundMaxConnsDefault bounds a background tick's pool
	// (enrichment): its claim running ahead, its grouped outcome records,
	// and one admission and one settle statement per workspace x provider
	// (guard groups) need no more, and however hot it runs it then keeps
	// at most this many backends busy on a database email shares.
	BackgroundMaxConnsDefault = 4
)

// TickMaxConns is the pool bound of a tick of kind: small for background
// work, so a storm cannot take the database's cores from email. An
// explicit pool_max_conns in the database URL overrides it.
func TickMaxConns(kind tickkind.Kind) int32 {
	if kind.Background() {
		return BackgroundMaxConnsDefault
	}
	return MaxConnsDefault
}

// Config tunes Open. Zero values take the defaults above.
type Config struct {
	URL              string
	ApplicationName  string
	StatementTimeout time.Duration
	LockTimeout      time.Duration
	ConnectTimeout   time.Duration
	MaxConns         int32
}

// ErrNoDatabaseURL is returned when neither --database-url nor DATABASE_URL
// is set.
var ErrNoDatabaseURL = errors.New("no database configured: set DATABASE_URL or pass --database-url (e.g. postgres://user@localhost:5432/rindactl)")

// DBTX is what queries need: a pool, a connection or a transaction.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// TxDB is a DBTX that can begin a transaction (a savepoint, on a
// transaction): a pool, a connection or a transaction.
type TxDB interface {
	DBTX
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Batcher is a DBTX that can also send a batch in one round trip: a pool,
// a connection or a transaction.
type Batcher interface {
	DBTX
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Open connects a pool and checks it with a ping. Every connection carries
// statement_timeout and lock_timeout. Errors never contain the password.
func Open(ctx context.Context, cfg Config) (*pgxpool.Pool, error) {
	pcfg, err := ParseConfig(cfg)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, describeConnError(pcfg.ConnConfig, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, connectTimeout(cfg))
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, describeConnError(pcfg.ConnConfig, err)
	}
	return pool, nil
}

// ParseConfig turns Config into a pgxpool config without connecting.
func ParseConfig(cfg Config) (*pgxpool.Config, error) {
	if cfg.URL == "" {
		return nil, ErrNoDatabaseURL
	}
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		// pgx's parse errors can echo the URL; say only what is wrong.
		return nil, errors.New("invalid database URL: expected postgres://user[:password]@host[:port]/dbname[?options]")
	}
	if cfg.StatementTimeout == 0 {
		cfg.StatementTimeout = StatementTimeoutDefault
	}
	if cfg.LockTimeout == 0 {
		cfg.LockTimeout = LockTimeoutDefault
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = MaxConnsDefault
	}
	if strings.Contains(cfg.URL, "pool_max_conns") {
		// The operator's own bound, as pgx read it from the URL.
		cfg.MaxConns = pcfg.MaxConns
	}
	if cfg.ApplicationName == "" {
		cfg.ApplicationName = "rindactl"
	}
	rp := pcfg.ConnConfig.RuntimeParams
	rp["statement_timeout"] = strconv.FormatInt(cfg.StatementTimeout.Milliseconds(), 10)
	rp["lock_timeout"] = strconv.FormatInt(cfg.LockTimeout.Milliseconds(), 10)
	// Every statement is short and reaches its rows by key: JIT's compile
	// (100-200 ms) never pays. A big table's cost estimate in a branch that
	// never runs (status's spend fallback over the ledger) triggered it, and
	// `status --overdue` beside a year of history took 1-2 s.
	rp["jit"] = "off"
	if _, ok := rp["application_name"]; !ok {
		rp["application_name"] = cfg.ApplicationName
	}
	pcfg.ConnConfig.ConnectTimeout = connectTimeout(cfg)
	pcfg.MaxConns = cfg.MaxConns
	return pcfg, nil
}

func connectTimeout(cfg Config) time.Duration {
	if cfg.ConnectTimeout > 0 {
		return cfg.ConnectTimeout
	}
	return ConnectTimeoutDefault
}

// ConnError is a connection failure described without secrets.
type ConnError struct {
	Host   string
	Port   uint16
	Reason string
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("cannot connect to Postgres at %s: %s", net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), e.Reason)
}

// describeConnError reduces a pgx connect error to host, port and the
// reason. pgx's own message includes the user and sometimes more of the
// connection string; we rebuild the line from parts we know are safe.
func describeConnError(cc *pgx.ConnConfig, err error) error {
	ce := &ConnError{Host: cc.Host, Port: cc.Port, Reason: "connection failed"}
	var pgErr *pgconn.PgError
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &pgErr):
		switch pgErr.Code {
		case "28P01", "28000":
			ce.Reason = fmt.Sprintf("authentication failed for user %q (check the user and password in DATABASE_URL)", cc.User)
		case "3D000":
			ce.Reason = fmt.Sprintf("database %q does not exist (create it or fix the database name in DATABASE_URL)", cc.Database)
		default:
			ce.Reason = fmt.Sprintf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
		}
	case errors.Is(err, context.DeadlineExceeded):
		ce.Reason = "timed out (is the server running and reachable?)"
	case errors.As(err, &opErr) && opErr.Err != nil:
		ce.Reason = sysReason(opErr.Err)
	case errors.As(err, &netErr) && netErr.Timeout():
		ce.Reason = "timed out (is the server running and reachable?)"
	default:
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			ce.Reason = "host not found"
		}
		if r := tlsReason(err); r != "" {
			ce.Reason = r
		}
	}
	return ce
}

// tlsReason names a TLS failure of the connection ("" when it is none):
// the sslmode that asked for TLS and what the server or its certificate
// did, not only "connection failed".
func tlsReason(err error) string {
	var verr *tls.CertificateVerificationError
	switch {
	// pgx has no sentinel for the server's "N" to SSLRequest.
	case strings.Contains(err.Error(), "server refused TLS connection"):
		return "the server does not accept TLS, which sslmode=require (or verify-ca, verify-full) in DATABASE_URL asks for: enable ssl on the server, or set sslmode=prefer or disable on a trusted network"
	case errors.As(err, &verr) && len(verr.UnverifiedCertificates) > 0:
		c := verr.UnverifiedCertificates[0]
		return fmt.Sprintf("TLS: the server's certificate (subject %q, issuer %q) is not trusted: %v (set sslrootcert in DATABASE_URL to its CA)", c.Subject.CommonName, c.Issuer.CommonName, verr.Err)
	case errors.As(err, &verr):
		return fmt.Sprintf("TLS: the server's certificate is not trusted: %v", verr.Err)
	}
	return ""
}

func sysReason(err error) string {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error() + " (is the server running?)"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "host not found"
	}
	return "connection failed"
}
