package store

import (
	"context"
	"fmt"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// SealedProviderKey is a workspace's own API key for a provider, sealed
// under the master key MasterKeyID names (package secrets opens it).
type SealedProviderKey struct {
	WorkspaceID int64
	Workspace   string
	Provider    string
	Ciphertext  []byte
	MasterKeyID string
}

// SealedProviderKeys lists every workspace's own sealed key.
func SealedProviderKeys(ctx context.Context, db DBTX) ([]SealedProviderKey, error) {
	rows, err := sqlcdb.New(db).ProviderKeysList(ctx)
	return convertRows(rows, err, "list workspace provider keys", func(r sqlcdb.ProviderKeysListRow) SealedProviderKey {
		return SealedProviderKey{WorkspaceID: r.WorkspaceID, Workspace: r.Workspace, Provider: r.Provider, Ciphertext: r.Ciphertext, MasterKeyID: r.MasterKeyID}
	})
}

// LockSealedProviderKeys lists every sealed key and locks them until the
// transaction db belongs to ends.
func LockSealedProviderKeys(ctx context.Context, db DBTX) ([]SealedProviderKey, error) {
	rows, err := sqlcdb.New(db).ProviderKeysLock(ctx)
	return convertRows(rows, err, "lock workspace provider keys", func(r sqlcdb.ProviderKeysLockRow) SealedProviderKey {
		return SealedProviderKey{WorkspaceID: r.WorkspaceID, Provider: r.Provider, Ciphertext: r.Ciphertext, MasterKeyID: r.MasterKeyID}
	})
}

// PutSealedProviderKey stores (or replaces) k.
func PutSealedProviderKey(ctx context.Context, db DBTX, k SealedProviderKey) error {
	err := sqlcdb.New(db).ProviderKeyUpsert(ctx, sqlcdb.ProviderKeyUpsertParams{
		WorkspaceID: k.WorkspaceID, Provider: k.Provider, Ciphertext: k.Ciphertext, MasterKeyID: k.MasterKeyID,
	})
	if err != nil {
		return fmt.Errorf("store workspace %d's %s key: %w", k.WorkspaceID, k.Provider, err)
	}
	return nil
}

// DeleteProviderKey drops a workspace's own key; false when it had none.
func DeleteProviderKey(ctx context.Context, db DBTX, workspaceID int64, provider string) (bool, error) {
	n, err := sqlcdb.New(db).ProviderKeyDelete(ctx, sqlcdb.ProviderKeyDeleteParams{WorkspaceID: workspaceID, Provider: provider})
	if err != nil {
		return false, fmt.Errorf("remove workspace %d's %s key: %w", workspaceID, provider, err)
	}
	return n > 0, nil
}
