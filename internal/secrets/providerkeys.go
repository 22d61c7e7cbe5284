package secrets

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// Keys are the workspaces' own API keys: workspace id → provider → key.
// A workspace missing here uses the host's RINDA_<PROVIDER>_API_KEY.
type Keys map[int64]map[string]string

// Get returns the workspace's own key for provider, if it has one.
func (k Keys) Get(workspaceID int64, provider string) (string, bool) {
	key, ok := k[workspaceID][provider]
	return key, ok
}

// Load opens every stored provider key with the master key from getenv.
// With none stored it needs no master key; with some, a missing or wrong
// master key is a *ConfigError naming a workspace and provider, never a
// key.
func Load(ctx context.Context, db store.DBTX, getenv func(string) string) (Keys, error) {
	rows, err := store.SealedProviderKeys(ctx, db)
	if err != nil || len(rows) == 0 {
		return Keys{}, err
	}
	mk, ok, err := LoadMasterKey(getenv)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, configErrorf("workspace %s has its own %s key (%d stored in all): set %s or %s to the master key they were sealed with",
			rows[0].Workspace, rows[0].Provider, len(rows), KeyEnv, KeyFileEnv)
	}
	keys := Keys{}
	for _, r := range rows {
		plain, err := mk.openRow(r)
		if err != nil {
			return nil, err
		}
		if keys[r.WorkspaceID] == nil {
			keys[r.WorkspaceID] = map[string]string{}
		}
		keys[r.WorkspaceID][r.Provider] = string(plain)
	}
	return keys, nil
}

// openRow opens one stored key, or says why it cannot, naming the row.
func (k MasterKey) openRow(r store.SealedProviderKey) ([]byte, error) {
	where := fmt.Sprintf("workspace %d's %s key", r.WorkspaceID, r.Provider)
	if r.Workspace != "" {
		where = fmt.Sprintf("workspace %s's %s key", r.Workspace, r.Provider)
	}
	if r.MasterKeyID != k.ID() {
		return nil, configErrorf("the master key (%s or %s) is not the one %s was sealed with (master key id %s, this one is %s): set the right key, or the new one after 'rindactl secrets rotate'",
			KeyEnv, KeyFileEnv, where, r.MasterKeyID, k.ID())
	}
	plain, err := k.open(r.Ciphertext, r.WorkspaceID, r.Provider)
	if err != nil {
		return nil, configErrorf("%s does not open with the master key although its key id matches (the row is damaged or was copied from another workspace): set it again with 'rindactl workspace set-key'", where)
	}
	return plain, nil
}

// SetProviderKey seals apiKey under mk and stores it as workspace's own
// key for provider, with an audit row (which names the workspace and
// provider, never the key). Stored keys sealed under another master key
// make it a *ConfigError: one master key seals them all.
func SetProviderKey(ctx context.Context, pool *pgxpool.Pool, mk MasterKey, workspace, provider, apiKey, actor string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ws, err := store.WorkspaceID(ctx, tx, workspace)
		if err != nil {
			return err
		}
		if err := sameMasterKey(ctx, tx, mk); err != nil {
			return err
		}
		row := store.SealedProviderKey{WorkspaceID: ws, Provider: provider, Ciphertext: mk.seal([]byte(apiKey), ws, provider), MasterKeyID: mk.ID()}
		if err := store.PutSealedProviderKey(ctx, tx, row); err != nil {
			return err
		}
		_, err = store.InsertAudit(ctx, tx, store.Audit{Actor: actor, Action: "workspace.set_key", Filters: map[string]any{"workspace": workspace, "provider": provider, "master_key_id": mk.ID()}, Affected: 1})
		return err
	})
}

// sameMasterKey refuses a master key other than the one the stored keys
// were sealed with.
func sameMasterKey(ctx context.Context, db store.DBTX, mk MasterKey) error {
	rows, err := store.SealedProviderKeys(ctx, db)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.MasterKeyID != mk.ID() {
			return configErrorf("the master key (%s or %s) is not the one the stored keys were sealed with (master key id %s, this one is %s, e.g. workspace %s's %s key): use that key, or rotate first with 'rindactl secrets rotate'",
				KeyEnv, KeyFileEnv, r.MasterKeyID, mk.ID(), r.Workspace, r.Provider)
		}
	}
	return sameMasterKeyTokens(ctx, db, mk)
}

// RemoveProviderKey drops workspace's own key for provider, with an audit
// row; the workspace falls back to the host's key. It reports whether there
// was one.
func RemoveProviderKey(ctx context.Context, pool *pgxpool.Pool, workspace, provider, actor string) (removed bool, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ws, err := store.WorkspaceID(ctx, tx, workspace)
		if err != nil {
			return err
		}
		if removed, err = store.DeleteProviderKey(ctx, tx, ws, provider); err != nil {
			return err
		}
		var n int64
		if removed {
			n = 1
		}
		_, err = store.InsertAudit(ctx, tx, store.Audit{Actor: actor, Action: "workspace.remove_key", Filters: map[string]any{"workspace": workspace, "provider": provider}, Affected: n})
		return err
	})
	return removed, err
}

// Rotate reseals every stored key (provider keys and mailboxes' OAuth2
// tokens) from old to next in one transaction, with
// one audit row: all keys move, or none does (a row old cannot open is a
// *ConfigError and changes nothing). It returns how many keys it resealed.
func Rotate(ctx context.Context, pool *pgxpool.Pool, old, next MasterKey, actor string) (n int, err error) {
	if old.ID() == next.ID() {
		return 0, configErrorf("the new master key is the current one: generate another (%s)", generateHint)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := store.LockSealedProviderKeys(ctx, tx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			plain, err := old.openRow(r)
			if err != nil {
				return err
			}
			r.Ciphertext, r.MasterKeyID = next.seal(plain, r.WorkspaceID, r.Provider), next.ID()
			if err := store.PutSealedProviderKey(ctx, tx, r); err != nil {
				return err
			}
		}
		tokens, err := resealMailboxTokens(ctx, tx, old, next)
		if err != nil {
			return err
		}
		n = len(rows) + tokens
		_, err = store.InsertAudit(ctx, tx, store.Audit{Actor: actor, Action: "secrets.rotate", Filters: map[string]any{"from_master_key_id": old.ID(), "to_master_key_id": next.ID()}, Affected: int64(n)})
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
