package mailauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/oauth2"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/store"
)

// RefreshEarlyDefault is how long before its expiry an access token is
// refreshed: a token handed out must outlive the SMTP or IMAP login it is
// for.
const RefreshEarlyDefault = 2 * time.Minute

// tokenRequestTimeout bounds one request to the token endpoint, made while
// the mailbox's row is locked.
const tokenRequestTimeout = 30 * time.Second

// Options configure Tokens; zero values are the production ones.
type Options struct {
	// LookupEnv reads the client id and secret variables; nil: os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// HTTPClient talks to the token endpoint; nil: http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock the cached expiry is read by; nil: time.Now.
	Now func() time.Time
	// RefreshEarly: 0 means RefreshEarlyDefault.
	RefreshEarly time.Duration
}

// Tokens hands out mailboxes' access tokens: the one cached in the
// database while it is fresh, else a new one from the provider, obtained
// under the mailbox's row lock so that every process and host together
// make one token request per mailbox per expiry.
type Tokens struct {
	pool *pgxpool.Pool
	key  secrets.MasterKey
	// keyErr: the master key could not be loaded (NewTokensFromEnv).
	keyErr error
	opts   Options
}

// NewTokens returns Tokens over pool with the master key the tokens are
// sealed with.
func NewTokens(pool *pgxpool.Pool, key secrets.MasterKey, opts Options) *Tokens {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RefreshEarly == 0 {
		opts.RefreshEarly = RefreshEarlyDefault
	}
	return &Tokens{pool: pool, key: key, opts: opts}
}

// NotAuthorizedError is a mailbox with no grant yet.
type NotAuthorizedError struct{ Address string }

func (e *NotAuthorizedError) Error() string {
	return fmt.Sprintf("mailbox %s has no OAuth2 grant yet: run 'rindactl mailbox authorize %s'", e.Address, e.Address)
}

// RevokedError is a grant the provider refused with invalid_grant (revoked,
// expired, or the password changed). Since is when the episode began (it
// keys the episode's one event); First is true only for the report that
// opened it.
type RevokedError struct {
	Address string
	Since   time.Time
	First   bool
}

func (e *RevokedError) Error() string {
	return fmt.Sprintf("mailbox %s: the provider refused its OAuth2 grant (invalid_grant: revoked or expired): run 'rindactl mailbox authorize %s'", e.Address, e.Address)
}

// AccessToken returns a fresh access token for the mailbox (id, address)
// with settings s. Errors: *NotAuthorizedError, *RevokedError, a
// *ConfigError or *secrets.ConfigError for settings or keys, else a
// transient failure to reach the provider. No error holds a token.
func (t *Tokens) AccessToken(ctx context.Context, mailboxID int64, address string, s Settings) (string, error) {
	if t.keyErr != nil {
		return "", fmt.Errorf("mailbox %s: %w", address, t.keyErr)
	}
	row, ok, err := store.MailboxOAuthTokenGet(ctx, t.pool, mailboxID, false)
	if err != nil {
		return "", err
	}
	if tok, done, err := t.cached(row, ok, address); done {
		return tok, err
	}
	var out string
	var revoked *RevokedError
	err = pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		// Whoever held the lock before us may have refreshed already.
		row, ok, err := store.MailboxOAuthTokenGet(ctx, tx, mailboxID, true)
		if err != nil {
			return err
		}
		tok, done, err := t.cached(row, ok, address)
		if done {
			out = tok
			return err
		}
		out, err = t.refresh(ctx, tx, row, address, s)
		if errors.As(err, &revoked) {
			return nil // the episode's mark is committed
		}
		return err
	})
	if err == nil && revoked != nil {
		return "", revoked
	}
	return out, err
}

// Refused tells the store a mail server refused token, the mailbox's
// cached access token (a grant revoked, or the provider retiring tokens
// before their expiry, as a password change does): the next AccessToken
// refreshes, and a revoked grant then gets invalid_grant. A token that is
// no longer the cached one (refreshed since) changes nothing.
func (t *Tokens) Refused(ctx context.Context, mailboxID int64, token string) error {
	row, ok, err := store.MailboxOAuthTokenGet(ctx, t.pool, mailboxID, false)
	if err != nil || !ok || row.AccessSealed == nil || t.keyErr != nil {
		return err
	}
	cached, err := t.key.OpenMailboxToken(row, row.AccessSealed, secrets.TokenAccess)
	if err != nil || cached != token {
		return nil // unreadable or another token: the next AccessToken refreshes or serves it
	}
	_, err = store.MailboxOAuthTokenRefused(ctx, t.pool, mailboxID, row.AccessSealed)
	return err
}

// cached answers from the row without a refresh when it can: done is
// false when a refresh is needed.
func (t *Tokens) cached(row store.MailboxOAuthToken, ok bool, address string) (token string, done bool, err error) {
	switch {
	case !ok:
		return "", true, &NotAuthorizedError{Address: address}
	case row.RevokedAt != nil:
		return "", true, &RevokedError{Address: address, Since: *row.RevokedAt}
	case row.AccessSealed == nil || row.AccessExpiry == nil || !row.AccessExpiry.After(t.opts.Now().Add(t.opts.RefreshEarly)):
		return "", false, nil
	}
	tok, err := t.key.OpenMailboxToken(row, row.AccessSealed, secrets.TokenAccess)
	if err != nil {
		// Only a cache: a refresh replaces it (a wrong master key fails
		// there too, on the refresh token).
		return "", false, nil
	}
	redact.Register(tok)
	return tok, true, nil
}

// refresh asks the provider for a new access token under the row's lock
// and records it, or records the grant revoked.
func (t *Tokens) refresh(ctx context.Context, tx pgx.Tx, row store.MailboxOAuthToken, address string, s Settings) (string, error) {
	rt, err := t.key.OpenMailboxToken(row, row.RefreshSealed, secrets.TokenRefresh)
	if err != nil {
		return "", err
	}
	cfg, err := s.Config(t.opts.LookupEnv, "")
	if err != nil {
		return "", err
	}
	rctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, t.opts.HTTPClient), tokenRequestTimeout)
	defer cancel()
	tok, err := cfg.TokenSource(rctx, &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			since, err := store.MailboxOAuthTokenRevoked(ctx, tx, row.MailboxID)
			if err != nil {
				return "", err
			}
			// The row was not revoked under our lock: this opens the episode.
			return "", &RevokedError{Address: address, Since: since, First: true}
		}
		return "", fmt.Errorf("mailbox %s: OAuth2 token refresh: %s", address, describe(err))
	}
	redact.Register(tok.AccessToken)
	now := t.opts.Now()
	expiry := now.Add(time.Hour)
	switch {
	case tok.ExpiresIn > 0:
		expiry = now.Add(time.Duration(tok.ExpiresIn) * time.Second)
	case !tok.Expiry.IsZero():
		expiry = tok.Expiry
	}
	if tok.RefreshToken != "" {
		rt = tok.RefreshToken // rotated (Microsoft does)
	}
	err = store.MailboxOAuthTokenRefreshed(ctx, tx, store.MailboxOAuthToken{MailboxID: row.MailboxID,
		AccessSealed: t.key.SealMailboxToken(tok.AccessToken, row.MailboxID, secrets.TokenAccess), AccessExpiry: &expiry,
		RefreshSealed: t.key.SealMailboxToken(rt, row.MailboxID, secrets.TokenRefresh)})
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// describe says why a token request failed in one line: the provider's
// error code and status, or the transport's error (the token endpoint's URL
// holds no secret), never the response body.
func describe(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" {
			code = "no error code"
		}
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return fmt.Sprintf("the token endpoint answered %d (%s)", status, code)
	}
	return redact.String(err.Error())
}

// NewTokensFromEnv is NewTokens with the master key from getenv
// (RINDA_SECRET_KEY or RINDA_SECRET_KEY_FILE). A missing or malformed key
// is reported by AccessToken, as a *secrets.ConfigError, for oauth2
// mailboxes only: password mailboxes need no key.
func NewTokensFromEnv(pool *pgxpool.Pool, getenv func(string) string, opts Options) *Tokens {
	key, ok, err := secrets.LoadMasterKey(getenv)
	t := NewTokens(pool, key, opts)
	switch {
	case err != nil:
		t.keyErr = err
	case !ok:
		t.keyErr = &ConfigError{msg: fmt.Sprintf("an oauth2 mailbox's tokens are sealed with the master key: set %s or %s on this host", secrets.KeyEnv, secrets.KeyFileEnv)}
	}
	return t
}
