package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/credits"
	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/store"
)

// ProvidersOptions holds the flags of `rindactl providers`.
type ProvidersOptions struct {
	f         *Factory
	Workspace string
	NoRefresh bool
	Output    string
}

func newCmdProviders(f *Factory) *cobra.Command {
	opts := &ProvidersOptions{f: f}
	cmd := &cobra.Command{
		Use:   "providers",
		Short: "Credits left, spend, pace and runway per workspace and provider",
		Long: `Show, per workspace and provider: whose key it uses (its own, set with
'rindactl workspace set-key', or the host's), the credits that account has
left (its last reading from the provider's free account endpoint, less the
calls billed since: "~" when any were; a reading older than the refresh is
marked stale with its age), the workspace's spend this UTC month (and its
calls that may have been billed twice: a finder asked again after its answer
was lost, RINDA_IN_DOUBT_RETRY_AFTER) and its calls in the last hour, and the
runway: how long the credits left last at the account's pace of billed calls
in the last hour.

Credits are read at most once per RINDA_CREDITS_REFRESH (default 5m) for all
processes together (enrich ticks read them too); a reading never costs a
credit. When an account's runway falls under RINDA_<PROVIDER>_RUNWAY_ALERT
(default 6h, or off) a credits_low event is written, one per episode, and
delivered to Slack like the other alerts. --no-refresh shows the last
readings without calling any provider (and without RINDA_SECRET_KEY).`,
		Example: `  rindactl providers
  rindactl providers --workspace acme --output json
  RINDA_FINDYMAIL_RUNWAY_ALERT=12h rindactl providers --no-refresh`,
	}
	cmd.Flags().StringVarP(&opts.Workspace, "workspace", "w", "", "only this workspace (by name)")
	cmd.Flags().BoolVar(&opts.NoRefresh, "no-refresh", false, "show the last readings; call no provider")
	return listCommand(cmd, &opts.Output, func(ctx context.Context, format cliio.Format) error { return providersRun(ctx, opts, format) })
}

func providersRun(ctx context.Context, opts *ProvidersOptions, format cliio.Format) error {
	names := append(provider.Finders(), provider.Verifiers()...)
	cfg, err := credits.ConfigFromEnv(opts.f.Getenv, names...)
	if err != nil {
		return usageError("%v", err)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	var ws *int64
	if opts.Workspace != "" {
		id, err := store.WorkspaceID(ctx, pool, opts.Workspace)
		if err != nil {
			return unknownWorkspace(err, opts.Workspace)
		}
		ws = &id
	}
	if !opts.NoRefresh {
		accounts, err := providerAccounts(ctx, opts.f, pool)
		if err != nil {
			return err
		}
		if _, err := credits.Refresh(ctx, pool, cfg, accounts, opts.f.Logger()); err != nil {
			return err
		}
	}
	rows, err := credits.Report(ctx, pool, names, ws, cfg.Every, opts.f.Now())
	if err != nil {
		return err
	}
	return cliio.WriteList(opts.f.IO, format, cliio.List[credits.Row]{Key: "providers", Rows: rows,
		Empty:   "no workspaces yet: 'rindactl import leads --workspace NAME FILE.csv' creates one",
		Header:  []string{"workspace", "provider", "key", "credits", "spend", "calls/h", "runway"},
		Numeric: []int{3, 4, 5},
		Cells: func(r credits.Row) []string {
			runway := r.Runway
			if r.CreditsLow {
				runway += " (low)"
			}
			spend := cliio.Decimal(r.MonthSpentUSD, 2)
			if r.PossibleSecondCharges > 0 {
				spend += fmt.Sprintf(" (%s possibly billed twice)", cliio.Thousands(r.PossibleSecondCharges))
			}
			return []string{r.Workspace, r.Provider, r.Key, creditsCell(r), spend, cliio.Thousands(r.CallsLastHour), runway}
		}})
}

// creditsCell is what an account has left: the last reading less the
// calls billed since ("~" when any were), "!" when the last reading
// failed, and the reading's age once it is older than the refresh: a
// stale figure is never shown as current.
func creditsCell(r credits.Row) string {
	if r.CreditsLeft == nil {
		return "?"
	}
	left := cliio.Thousands(*r.CreditsLeft)
	if r.BilledSinceRead > 0 {
		left = "~" + left
	}
	if r.CreditsError != "" {
		left += "!"
	}
	if r.CreditsStale && r.CreditsReadAgeSeconds != nil {
		left += " (stale: read " + (time.Duration(*r.CreditsReadAgeSeconds) * time.Second).String() + " ago)"
	}
	return left
}

// providerAccounts lists the accounts whose credits this host can read:
// each provider with a key here, and every workspace's own key (opened
// with the master key; a missing or wrong one is exit 2).
func providerAccounts(ctx context.Context, f *Factory, pool *pgxpool.Pool) ([]credits.Account, error) {
	var host []any
	for _, name := range provider.Finders() {
		fd, err := provider.NewFinder(name, f.Getenv)
		if err != nil {
			return nil, usageError("%v", err)
		}
		host = append(host, fd)
	}
	verifiers := map[int64]enrich.Verifier{}
	for _, name := range provider.Verifiers() {
		v, err := provider.NewVerifier(name, f.Getenv)
		if err != nil {
			return nil, usageError("%v", err)
		}
		host = append(host, v)
	}
	keys, err := secrets.Load(ctx, pool, f.Getenv)
	var kerr *secrets.ConfigError
	if errors.As(err, &kerr) {
		return nil, usageError("%v (or pass --no-refresh to show the last readings)", kerr)
	}
	if err != nil {
		return nil, err
	}
	ownF, _, err := provider.OwnAdapters(keys, provider.Finders(), "", f.Getenv)
	if err != nil {
		return nil, usageError("%v", err)
	}
	for _, name := range provider.Verifiers() {
		_, ownV, err := provider.OwnAdapters(keys, nil, name, f.Getenv)
		if err != nil {
			return nil, usageError("%v", err)
		}
		for ws, v := range ownV {
			verifiers[ws] = v
		}
	}
	return credits.AccountsOf(host, ownF, verifiers), nil
}
