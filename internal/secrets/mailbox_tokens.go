package secrets

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// The roles of a mailbox's sealed tokens: each is bound to its role, so a
// refresh token cannot be opened as the access token or the other way.
const (
	TokenRefresh = "refresh"
	TokenAccess  = "access"
)

// tokenAAD binds a mailbox's sealed token to the mailbox and its role.
func tokenAAD(mailboxID int64, role string) []byte {
	return []byte("rindactl mailbox token\x00" + strconv.FormatInt(mailboxID, 10) + "\x00" + role)
}

// SealMailboxToken seals one of a mailbox's OAuth2 tokens.
func (k MasterKey) SealMailboxToken(token string, mailboxID int64, role string) []byte {
	return k.sealAAD([]byte(token), tokenAAD(mailboxID, role))
}

// OpenMailboxToken opens one of t's tokens, or says why it cannot (a
// *ConfigError naming the mailbox, never a token or key).
func (k MasterKey) OpenMailboxToken(t store.MailboxOAuthToken, sealed []byte, role string) (string, error) {
	if t.MasterKeyID != k.ID() {
		return "", configErrorf("the master key (%s or %s) is not the one mailbox %d's OAuth2 tokens were sealed with (master key id %s, this one is %s): set the right key, or the new one after 'rindactl secrets rotate'",
			KeyEnv, KeyFileEnv, t.MailboxID, t.MasterKeyID, k.ID())
	}
	plain, err := k.openAAD(sealed, tokenAAD(t.MailboxID, role))
	if err != nil {
		return "", configErrorf("mailbox %d's OAuth2 %s token does not open with the master key although its key id matches (the row is damaged or was copied): run 'rindactl mailbox authorize' again", t.MailboxID, role)
	}
	return string(plain), nil
}

// resealMailboxTokens moves every mailbox's tokens from old to next inside
// the rotation's transaction; it returns how many mailboxes it resealed.
func resealMailboxTokens(ctx context.Context, tx pgx.Tx, old, next MasterKey) (int, error) {
	rows, err := store.LockMailboxOAuthTokens(ctx, tx)
	if err != nil {
		return 0, err
	}
	for _, r := range rows {
		refresh, err := old.OpenMailboxToken(r, r.RefreshSealed, TokenRefresh)
		if err != nil {
			return 0, fmt.Errorf("mailbox %s: %w", r.Address, err)
		}
		out := store.MailboxOAuthToken{MailboxID: r.MailboxID, RefreshSealed: next.SealMailboxToken(refresh, r.MailboxID, TokenRefresh), MasterKeyID: next.ID()}
		if r.AccessSealed != nil {
			// A cached access token that does not open is only a cache:
			// it is dropped, and the next tick refreshes.
			if access, err := old.OpenMailboxToken(r, r.AccessSealed, TokenAccess); err == nil {
				out.AccessSealed = next.SealMailboxToken(access, r.MailboxID, TokenAccess)
			}
		}
		if err := store.ResealMailboxOAuthToken(ctx, tx, out); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

// sameMasterKeyTokens refuses a master key other than the one mailboxes'
// tokens were sealed with.
func sameMasterKeyTokens(ctx context.Context, db store.DBTX, mk MasterKey) error {
	rows, err := store.LockMailboxOAuthTokens(ctx, db)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.MasterKeyID != mk.ID() {
			return configErrorf("the master key (%s or %s) is not the one mailbox %s's OAuth2 tokens were sealed with (master key id %s, this one is %s): use that key, or rotate first with 'rindactl secrets rotate'",
				KeyEnv, KeyFileEnv, r.Address, r.MasterKeyID, mk.ID())
		}
	}
	return nil
}

// StoreMailboxGrant seals a mailbox's new grant (its refresh token and
// first access token, which expires at expiry) and stores it with an audit
// row naming the mailbox, never a token; a pause a revoked grant caused
// ends with it. Tokens stored under another master
// key make it a *ConfigError: one master key seals them all.
func StoreMailboxGrant(ctx context.Context, pool *pgxpool.Pool, mk MasterKey, mailboxID int64, address, refresh, access string, expiry time.Time, actor string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := sameMasterKey(ctx, tx, mk); err != nil {
			return err
		}
		t := store.MailboxOAuthToken{MailboxID: mailboxID, RefreshSealed: mk.SealMailboxToken(refresh, mailboxID, TokenRefresh), MasterKeyID: mk.ID()}
		if access != "" {
			t.AccessSealed, t.AccessExpiry = mk.SealMailboxToken(access, mailboxID, TokenAccess), &expiry
		}
		if err := store.MailboxOAuthTokenPut(ctx, tx, t); err != nil {
			return err
		}
		// The new grant ends a revoked-grant episode's pause at once.
		resumed, err := store.ClearAuthRevokedPause(ctx, tx, mailboxID)
		if err != nil {
			return err
		}
		_, err = store.InsertAudit(ctx, tx, store.Audit{Actor: actor, Action: "mailbox.authorize", Filters: map[string]any{"mailbox": address, "master_key_id": mk.ID(), "resumed": resumed}, Affected: 1})
		return err
	})
}
