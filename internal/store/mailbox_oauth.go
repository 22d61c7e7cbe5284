package store

import (
	"context"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// MailboxOAuthToken is a mailbox's OAuth2 tokens as stored: sealed under
// the master key MasterKeyID names (package secrets opens them).
// AccessSealed is nil when no access token is cached.
type MailboxOAuthToken struct {
	MailboxID     int64
	Address       string
	RefreshSealed []byte
	AccessSealed  []byte
	AccessExpiry  *time.Time
	MasterKeyID   string
	RevokedAt     *time.Time
}

// MailboxOAuthTokenGet reads a mailbox's tokens; ok is false when it was
// never authorized. lock takes the row lock until db's transaction ends.
func MailboxOAuthTokenGet(ctx context.Context, db DBTX, mailboxID int64, lock bool) (tok MailboxOAuthToken, ok bool, err error) {
	q := sqlcdb.New(db)
	var rows []sqlcdb.MailboxOAuthTokenGetRow
	if lock {
		var locked []sqlcdb.MailboxOAuthTokenLockRow
		locked, err = q.MailboxOAuthTokenLock(ctx, mailboxID)
		for _, r := range locked {
			rows = append(rows, sqlcdb.MailboxOAuthTokenGetRow(r))
		}
	} else {
		rows, err = q.MailboxOAuthTokenGet(ctx, mailboxID)
	}
	if err != nil {
		return tok, false, fmt.Errorf("mailbox %d OAuth2 tokens: %w", mailboxID, err)
	}
	if len(rows) == 0 {
		return tok, false, nil
	}
	r := rows[0]
	return MailboxOAuthToken{MailboxID: r.MailboxID, RefreshSealed: r.RefreshSealed, AccessSealed: r.AccessSealed,
		AccessExpiry: r.AccessExpiry, MasterKeyID: r.MasterKeyID, RevokedAt: r.RevokedAt}, true, nil
}

// MailboxOAuthTokenPut stores a new grant (from `mailbox authorize`).
func MailboxOAuthTokenPut(ctx context.Context, db DBTX, t MailboxOAuthToken) error {
	err := sqlcdb.New(db).MailboxOAuthTokenPut(ctx, sqlcdb.MailboxOAuthTokenPutParams{MailboxID: t.MailboxID, RefreshSealed: t.RefreshSealed,
		AccessSealed: t.AccessSealed, AccessExpiry: t.AccessExpiry, MasterKeyID: t.MasterKeyID})
	if err != nil {
		return fmt.Errorf("store mailbox %d OAuth2 tokens: %w", t.MailboxID, err)
	}
	return nil
}

// MailboxOAuthTokenRefreshed records a refresh made under the row's lock.
func MailboxOAuthTokenRefreshed(ctx context.Context, db DBTX, t MailboxOAuthToken) error {
	err := sqlcdb.New(db).MailboxOAuthTokenRefreshed(ctx, sqlcdb.MailboxOAuthTokenRefreshedParams{MailboxID: t.MailboxID,
		AccessSealed: t.AccessSealed, AccessExpiry: t.AccessExpiry, RefreshSealed: t.RefreshSealed})
	if err != nil {
		return fmt.Errorf("record mailbox %d token refresh: %w", t.MailboxID, err)
	}
	return nil
}

// MailboxOAuthTokenRevoked marks the mailbox's grant revoked and returns
// when the episode began (kept by later reports).
func MailboxOAuthTokenRevoked(ctx context.Context, db DBTX, mailboxID int64) (since time.Time, err error) {
	since, err = sqlcdb.New(db).MailboxOAuthTokenRevoked(ctx, mailboxID)
	if err != nil {
		return since, fmt.Errorf("mark mailbox %d grant revoked: %w", mailboxID, err)
	}
	return since, nil
}

// LockMailboxOAuthTokens lists and locks every mailbox's tokens.
func LockMailboxOAuthTokens(ctx context.Context, db DBTX) ([]MailboxOAuthToken, error) {
	rows, err := sqlcdb.New(db).MailboxOAuthTokensLock(ctx)
	return convertRows(rows, err, "lock mailbox OAuth2 tokens", func(r sqlcdb.MailboxOAuthTokensLockRow) MailboxOAuthToken {
		return MailboxOAuthToken{MailboxID: r.MailboxID, Address: r.Address, RefreshSealed: r.RefreshSealed, AccessSealed: r.AccessSealed, MasterKeyID: r.MasterKeyID}
	})
}

// ResealMailboxOAuthToken stores t's tokens sealed under another key.
func ResealMailboxOAuthToken(ctx context.Context, db DBTX, t MailboxOAuthToken) error {
	err := sqlcdb.New(db).MailboxOAuthTokenReseal(ctx, sqlcdb.MailboxOAuthTokenResealParams{MailboxID: t.MailboxID,
		RefreshSealed: t.RefreshSealed, AccessSealed: t.AccessSealed, MasterKeyID: t.MasterKeyID})
	if err != nil {
		return fmt.Errorf("reseal mailbox %d OAuth2 tokens: %w", t.MailboxID, err)
	}
	return nil
}

// MailboxRef names a mailbox: its id and its workspace.
type MailboxRef struct {
	ID        int64
	Workspace string
}

// MailboxesByAddress finds the mailboxes with address, in workspace (or in
// every workspace when it is "").
func MailboxesByAddress(ctx context.Context, db DBTX, address, workspace string) ([]MailboxRef, error) {
	rows, err := sqlcdb.New(db).MailboxByAddress(ctx, sqlcdb.MailboxByAddressParams{Address: address, Workspace: workspace})
	return convertRows(rows, err, "find mailbox "+address, func(r sqlcdb.MailboxByAddressRow) MailboxRef {
		return MailboxRef{ID: r.ID, Workspace: r.Workspace}
	})
}

// ClearAuthRevokedPause ends the mailbox's pause when a revoked grant
// caused it; it reports whether there was one.
func ClearAuthRevokedPause(ctx context.Context, db DBTX, mailboxID int64) (bool, error) {
	n, err := sqlcdb.New(db).MailboxAuthRevokedPauseClear(ctx, mailboxID)
	if err != nil {
		return false, fmt.Errorf("resume mailbox %d: %w", mailboxID, err)
	}
	return n > 0, nil
}

// MailboxOAuthTokenRefused forgets the cached access token accessSealed
// (a mail server refused it); forgot is false when the row holds another
// by now.
func MailboxOAuthTokenRefused(ctx context.Context, db DBTX, mailboxID int64, accessSealed []byte) (forgot bool, err error) {
	n, err := sqlcdb.New(db).MailboxOAuthTokenRefused(ctx, sqlcdb.MailboxOAuthTokenRefusedParams{MailboxID: mailboxID, AccessSealed: accessSealed})
	if err != nil {
		return false, fmt.Errorf("forget mailbox %d's refused access token: %w", mailboxID, err)
	}
	return n > 0, nil
}
