package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/secrets"
)

func newCmdSecrets(f *Factory) *cobra.Command {
	return groupCommand("secrets", "Manage the master key that seals workspaces' provider keys",
		`Workspaces' own provider API keys ('rindactl workspace set-key') are stored
sealed with AES-256-GCM under a master key from RINDA_SECRET_KEY or the file
RINDA_SECRET_KEY_FILE names: 32 random bytes in base64 ('openssl rand -base64 32').`,
		newCmdSecretsRotate(f))
}

// SecretsRotateOptions holds the flags of `rindactl secrets rotate`.
type SecretsRotateOptions struct {
	f          *Factory
	NewKeyFile string
}

// newKeyEnv carries the new master key for a rotation when no file is
// given.
const newKeyEnv = "RINDA_SECRET_KEY_NEW"

func newCmdSecretsRotate(f *Factory) *cobra.Command {
	opts := &SecretsRotateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rotate --new-key-file FILE",
		Short: "Reseal every stored provider key under a new master key, in one transaction",
		Long: `Reseal every workspace's stored provider key from the current master key
(RINDA_SECRET_KEY or RINDA_SECRET_KEY_FILE) to a new one, read from
--new-key-file or, without it, from ` + newKeyEnv + `. It runs in one
transaction: every key moves, or, when one does not open with the current
master key, none does (exit 2). It writes one audit log row.

Then give every host the new key (RINDA_SECRET_KEY or its file): ticks still
on the old one stop with exit 2 and a message saying so until they have it.`,
		Example: `  openssl rand -base64 32 > /etc/rindactl/master.key.new
  rindactl secrets rotate --new-key-file /etc/rindactl/master.key.new
  mv /etc/rindactl/master.key.new /etc/rindactl/master.key   # RINDA_SECRET_KEY_FILE`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return secretsRotateRun(cmd.Context(), opts) },
	}
	cmd.Flags().StringVar(&opts.NewKeyFile, "new-key-file", "", "file holding the new master key (base64 of 32 random bytes); default: "+newKeyEnv)
	return cmd
}

func secretsRotateRun(ctx context.Context, opts *SecretsRotateOptions) error {
	old, ok, err := secrets.LoadMasterKey(opts.f.Getenv)
	if err != nil {
		return usageError("%v", err)
	}
	if !ok {
		return usageError("%s is not set: rotation needs the current master key (or %s)", secrets.KeyEnv, secrets.KeyFileEnv)
	}
	var next secrets.MasterKey
	switch {
	case opts.NewKeyFile != "":
		raw, err := os.ReadFile(opts.NewKeyFile)
		if err != nil {
			return usageError("--new-key-file %s cannot be read: %v", opts.NewKeyFile, errors.Unwrap(err))
		}
		next, err = secrets.ParseMasterKey("--new-key-file "+opts.NewKeyFile, string(raw))
		if err != nil {
			return usageError("%v", err)
		}
	case strings.TrimSpace(opts.f.Getenv(newKeyEnv)) != "":
		if next, err = secrets.ParseMasterKey(newKeyEnv, opts.f.Getenv(newKeyEnv)); err != nil {
			return usageError("%v", err)
		}
	default:
		return usageError("no new master key: pass --new-key-file FILE or set %s (make one with 'openssl rand -base64 32')", newKeyEnv)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	n, err := secrets.Rotate(ctx, pool, old, next, actor(opts.f))
	var kerr *secrets.ConfigError
	if errors.As(err, &kerr) {
		return usageError("%v", kerr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.f.IO.Out, "resealed %d provider key(s) from master key id %s to %s in one transaction; now give every host the new key\n", n, old.ID(), next.ID())
	return nil
}
