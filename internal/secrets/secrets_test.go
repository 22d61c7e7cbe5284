package secrets_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func newKey(t *testing.T) (secrets.MasterKey, string) {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	text := base64.StdEncoding.EncodeToString(b)
	k, err := secrets.ParseMasterKey("test", text)
	if err != nil {
		t.Fatal(err)
	}
	return k, text
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadMasterKey(t *testing.T) {
	t.Parallel()
	k, text := newKey(t)
	file := filepath.Join(t.TempDir(), "master.key")
	if err := os.WriteFile(file, []byte(text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, vars := range map[string]map[string]string{
		"variable": {secrets.KeyEnv: text},
		"file":     {secrets.KeyFileEnv: file},
	} {
		got, ok, err := secrets.LoadMasterKey(env(vars))
		if err != nil || !ok || got.ID() != k.ID() {
			t.Errorf("%s: %v %v, id %s want %s", name, ok, err, got.ID(), k.ID())
		}
	}
	if _, ok, err := secrets.LoadMasterKey(env(nil)); ok || err != nil {
		t.Errorf("unset: ok %v err %v, want neither", ok, err)
	}
	short := base64.StdEncoding.EncodeToString([]byte("sixteen-byte-key"))
	for name, vars := range map[string]map[string]string{
		"both":         {secrets.KeyEnv: text, secrets.KeyFileEnv: file},
		"not base64":   {secrets.KeyEnv: "hunter2-is-not-a-key"},
		"16 bytes":     {secrets.KeyEnv: short},
		"missing file": {secrets.KeyFileEnv: filepath.Join(t.TempDir(), "none")},
	} {
		_, _, err := secrets.LoadMasterKey(env(vars))
		var ce *secrets.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: err %v, want a ConfigError", name, err)
			continue
		}
		for _, v := range vars {
			if strings.Contains(err.Error(), v) && !strings.HasSuffix(v, "none") && v != file {
				t.Errorf("%s: the error repeats the value: %v", name, err)
			}
		}
		if !strings.Contains(err.Error(), "RINDA_SECRET_KEY") {
			t.Errorf("%s: the error %q does not name the variable", name, err)
		}
	}
}

// Set, load, rotate against Postgres: keys open only with their master
// key, rotation moves all of them in one transaction or none, and neither
// a key nor the master key appears in an error or the audit log.
func TestSetLoadRotate(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO workspaces (name) VALUES ('acme'), ('beta')`); err != nil {
		t.Fatal(err)
	}
	old, oldText := newKey(t)
	next, nextText := newKey(t)
	const acmeKey, betaKey = "acme-hunter-SECRET-1", "beta-findymail-SECRET-2"

	// Nothing stored: no master key needed.
	if keys, err := secrets.Load(ctx, db.Pool, env(nil)); err != nil || len(keys) != 0 {
		t.Fatalf("empty store: %v %v", keys, err)
	}
	if err := secrets.SetProviderKey(ctx, db.Pool, old, "acme", "hunter", acmeKey, "test"); err != nil {
		t.Fatal(err)
	}
	if err := secrets.SetProviderKey(ctx, db.Pool, old, "beta", "findymail", betaKey, "test"); err != nil {
		t.Fatal(err)
	}
	if err := secrets.SetProviderKey(ctx, db.Pool, old, "nosuch", "hunter", "x", "test"); err == nil {
		t.Fatal("an unknown workspace was accepted")
	}
	keys, err := secrets.Load(ctx, db.Pool, env(map[string]string{secrets.KeyEnv: oldText}))
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := keys.Get(1, "hunter"); k != acmeKey {
		t.Fatalf("acme's hunter key did not round-trip")
	}
	if _, ok := keys.Get(1, "findymail"); ok {
		t.Fatal("acme has no own findymail key")
	}

	check := func(err error, what string) {
		t.Helper()
		var ce *secrets.ConfigError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: err %v, want a ConfigError", what, err)
		}
		for _, s := range []string{acmeKey, betaKey, oldText, nextText} {
			if strings.Contains(err.Error(), s) {
				t.Fatalf("%s: the error carries a key: %v", what, err)
			}
		}
	}
	_, err = secrets.Load(ctx, db.Pool, env(nil))
	check(err, "no master key")
	_, err = secrets.Load(ctx, db.Pool, env(map[string]string{secrets.KeyEnv: nextText}))
	check(err, "wrong master key")
	check(secrets.SetProviderKey(ctx, db.Pool, next, "acme", "findymail", "y", "test"), "set-key under another master key")

	// A row copied to another workspace does not open there.
	if _, err := db.Pool.Exec(ctx, `INSERT INTO workspace_provider_keys (workspace_id, provider, ciphertext, master_key_id)
		SELECT 2, 'hunter', ciphertext, master_key_id FROM workspace_provider_keys WHERE workspace_id = 1 AND provider = 'hunter'`); err != nil {
		t.Fatal(err)
	}
	_, err = secrets.Load(ctx, db.Pool, env(map[string]string{secrets.KeyEnv: oldText}))
	check(err, "a copied row")
	// Rotation meets the copied row: all or nothing, nothing moved.
	_, err = secrets.Rotate(ctx, db.Pool, old, next, "test")
	check(err, "rotation over a damaged row")
	var underOld int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM workspace_provider_keys WHERE master_key_id = $1`, old.ID()).Scan(&underOld); err != nil || underOld != 3 {
		t.Fatalf("%d keys under the old master key after a failed rotation (%v), want all 3", underOld, err)
	}
	if _, err := db.Pool.Exec(ctx, `DELETE FROM workspace_provider_keys WHERE workspace_id = 2 AND provider = 'hunter'`); err != nil {
		t.Fatal(err)
	}

	n, err := secrets.Rotate(ctx, db.Pool, old, next, "test")
	if err != nil || n != 2 {
		t.Fatalf("rotate: %d %v, want 2 resealed", n, err)
	}
	_, err = secrets.Load(ctx, db.Pool, env(map[string]string{secrets.KeyEnv: oldText}))
	check(err, "the old master key after rotation")
	keys, err = secrets.Load(ctx, db.Pool, env(map[string]string{secrets.KeyEnv: nextText}))
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := keys.Get(2, "findymail"); k != betaKey {
		t.Fatal("beta's key did not survive the rotation")
	}
	var audit string
	if err := db.Pool.QueryRow(ctx, `SELECT string_agg(action || ' ' || filters::text, E'\n') FROM audit_log`).Scan(&audit); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(audit, "secrets.rotate") || !strings.Contains(audit, "workspace.set_key") {
		t.Fatalf("audit log lacks the actions: %s", audit)
	}
	for _, s := range []string{acmeKey, betaKey, oldText, nextText} {
		if strings.Contains(audit, s) {
			t.Fatal("the audit log carries a key")
		}
	}
	removed, err := secrets.RemoveProviderKey(ctx, db.Pool, "acme", "hunter", "test")
	if err != nil || !removed {
		t.Fatalf("remove: %v %v", removed, err)
	}
	if keys, _ := secrets.Load(ctx, db.Pool, env(map[string]string{secrets.KeyEnv: nextText})); len(keys[1]) != 0 {
		t.Fatal("acme still has an own key after removal")
	}
}
