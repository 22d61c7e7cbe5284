package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/store"
)

// WorkspaceSetKeyOptions holds the flags of `rindactl workspace set-key`.
type WorkspaceSetKeyOptions struct {
	f         *Factory
	Workspace string
	Provider  string
	Remove    bool
}

func newCmdWorkspaceSetKey(f *Factory) *cobra.Command {
	opts := &WorkspaceSetKeyOptions{f: f}
	cmd := &cobra.Command{
		Use:   "set-key --workspace W --provider P",
		Short: "Give a workspace its own provider API key (read from standard input)",
		Long: `Store a workspace's own API key for a provider. The key is read from
standard input (on a terminal it is asked for without echo; piped, one line)
and stored sealed with AES-256-GCM under the master key in RINDA_SECRET_KEY
or the file RINDA_SECRET_KEY_FILE names (32 random bytes in base64: make one
with 'openssl rand -base64 32'; see docs/providers.md). Enrich ticks then
call that provider with this key for this workspace's leads, on its own
token bucket and credits (see 'rindactl providers'); workspaces without a
key of their own use the host's RINDA_<PROVIDER>_API_KEY, as before.

The key is never printed, logged or put in an event or error. --remove
drops it (the workspace falls back to the host's key). Both write an audit
log row naming the workspace and the provider.`,
		Example: `  # from a secret manager, without the key touching the shell history
  vault kv get -field=hunter secret/acme | rindactl workspace set-key --workspace acme --provider hunter

  # typed in (asked for without echo)
  rindactl workspace set-key --workspace acme --provider findymail

  # back to the host's key
  rindactl workspace set-key --workspace acme --provider hunter --remove`,
		Args: exactArgs(0, "none; the key is read from standard input"),
		RunE: func(cmd *cobra.Command, args []string) error { return workspaceSetKeyRun(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Workspace, "workspace", "w", "", "the workspace (by name)")
	fl.StringVar(&opts.Provider, "provider", "", "the provider: "+strings.Join(append(provider.Finders(), provider.Verifiers()...), ", "))
	fl.BoolVar(&opts.Remove, "remove", false, "drop the workspace's own key: it uses the host's again")
	return cmd
}

func workspaceSetKeyRun(ctx context.Context, opts *WorkspaceSetKeyOptions) error {
	opts.Provider = strings.ToLower(strings.TrimSpace(opts.Provider))
	switch {
	case opts.Workspace == "":
		return usageError("--workspace is required: the workspace whose key this is")
	case opts.Provider == "":
		return usageError("--provider is required: one of %s", strings.Join(append(provider.Finders(), provider.Verifiers()...), ", "))
	}
	if _, ok := provider.Lookup(opts.Provider); !ok {
		return usageError("unknown --provider %q: use one of %s", opts.Provider, strings.Join(append(provider.Finders(), provider.Verifiers()...), ", "))
	}
	if opts.Remove {
		return workspaceRemoveKey(ctx, opts)
	}
	ios := opts.f.IO
	mk, ok, err := secrets.LoadMasterKey(opts.f.Getenv)
	if err != nil {
		return usageError("%v", err)
	}
	if !ok {
		return usageError("%s is not set: provider keys are stored sealed under it; set it (or %s) to 32 random bytes in base64, e.g. from 'openssl rand -base64 32', and keep it like a password",
			secrets.KeyEnv, secrets.KeyFileEnv)
	}
	key, err := ios.ReadSecret(fmt.Sprintf("%s API key for workspace %s: ", opts.Provider, opts.Workspace))
	if err != nil {
		return usageError("%v", err)
	}
	if err := checkAPIKey(key); err != nil {
		return err
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	err = secrets.SetProviderKey(ctx, pool, mk, opts.Workspace, opts.Provider, key, actor(opts.f))
	var kerr *secrets.ConfigError
	switch {
	case errors.As(err, &kerr):
		return usageError("%v", kerr)
	case errors.Is(err, store.ErrNoWorkspace):
		return unknownWorkspace(err, opts.Workspace)
	case err != nil:
		return err
	}
	fmt.Fprintf(ios.Out, "workspace %s: own %s key stored (sealed, master key id %s); its enrich calls to %s use it from the next tick\n",
		opts.Workspace, opts.Provider, mk.ID(), opts.Provider)
	return nil
}

// workspaceRemoveKey drops the workspace's own key for the provider.
func workspaceRemoveKey(ctx context.Context, opts *WorkspaceSetKeyOptions) error {
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	removed, err := secrets.RemoveProviderKey(ctx, pool, opts.Workspace, opts.Provider, actor(opts.f))
	if err != nil {
		return unknownWorkspace(err, opts.Workspace)
	}
	if !removed {
		fmt.Fprintf(opts.f.IO.Out, "workspace %s had no %s key of its own: it uses the host's\n", opts.Workspace, opts.Provider)
		return nil
	}
	fmt.Fprintf(opts.f.IO.Out, "workspace %s: own %s key removed; it uses the host's %s again\n", opts.Workspace, opts.Provider, "RINDA_"+strings.ToUpper(opts.Provider)+"_API_KEY")
	return nil
}

// checkAPIKey refuses what cannot be an API key, without repeating it.
func checkAPIKey(key string) error {
	if key == "" {
		return usageError("no key on standard input: pipe it in, e.g. printf '%%s' \"$KEY\" | rindactl workspace set-key --workspace W --provider P")
	}
	if len(key) > 1024 || strings.IndexFunc(key, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return usageError("the key on standard input is not one token (it has spaces, control characters or more than 1024 characters): give only the key")
	}
	return nil
}
