package credits

import (
	"context"
	"log/slog"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/store"
)

// Account is one provider account whose credits can be read: the host's
// key (WorkspaceID nil) or a workspace's own.
type Account struct {
	// Key is enrich.Account's name for it ("hunter", "hunter/ws/12"),
	// which the token bucket shares.
	Key         string
	Provider    string
	WorkspaceID *int64
	Reporter    enrich.CreditReporter
}

// AccountsOf lists the accounts behind the host's adapters (those that
// report credits and have a key on this host) and the workspaces' own.
func AccountsOf(host []any, ownFinders map[int64]map[string]enrich.Finder, ownVerifiers map[int64]enrich.Verifier) []Account {
	var out []Account
	for _, a := range host {
		r, ok := a.(enrich.CreditReporter)
		if !ok || configured(a) != nil {
			continue
		}
		out = append(out, Account{Key: enrich.Account(r.Name(), 0, false), Provider: r.Name(), Reporter: r})
	}
	own := func(ws int64, a any) {
		if r, ok := a.(enrich.CreditReporter); ok {
			out = append(out, Account{Key: enrich.Account(r.Name(), ws, true), Provider: r.Name(), WorkspaceID: &ws, Reporter: r})
		}
	}
	for ws, fs := range ownFinders {
		for _, f := range fs {
			own(ws, f)
		}
	}
	for ws, v := range ownVerifiers {
		own(ws, v)
	}
	return out
}

func configured(a any) error {
	if c, ok := a.(enrich.Configurable); ok {
		return c.ConfigError()
	}
	return nil
}

// Refresh reads the credits of every account of accounts that is due
// (never read, or read cfg.Every ago or more; one process reads an account
// at a time, the others use its reading), and checks the runway of each
// account it read against its provider's threshold, writing credits_low
// once per episode. Reading an account endpoint costs no credit and writes
// no ledger row. It returns the accounts' readings, for metrics; a failed
// reading is recorded with the account (read_error), not returned.
func Refresh(ctx context.Context, db store.DBTX, cfg Config, accounts []Account, log *slog.Logger) ([]store.CreditsAccount, error) {
	if cfg.Every <= 0 {
		cfg.Every = RefreshDefault
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = ReadTimeoutDefault
	}
	fresh := map[string]bool{}
	for _, a := range accounts {
		read, err := read(ctx, db, cfg, a, log)
		if err != nil {
			return nil, err
		}
		fresh[a.Key] = read
	}
	all, err := store.CreditsAccounts(ctx, db)
	if err != nil {
		return nil, err
	}
	wanted := map[string]bool{}
	for _, a := range accounts {
		wanted[a.Key] = true
	}
	var out []store.CreditsAccount
	for _, row := range all {
		if !wanted[row.Account] {
			continue
		}
		out = append(out, row)
		if !fresh[row.Account] {
			continue // its reader checks the runway
		}
		if err := alert(ctx, db, cfg, row, log); err != nil {
			return out, err
		}
	}
	return out, nil
}

// read reads account a's credits when it is this process's turn, and
// reports whether it was.
func read(ctx context.Context, db store.DBTX, cfg Config, a Account, log *slog.Logger) (bool, error) {
	mine, err := store.ClaimCreditsRead(ctx, db, a.Key, a.Provider, a.WorkspaceID, cfg.Every, cfg.ReadTimeout+30*time.Second)
	if err != nil || !mine {
		return false, err
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.ReadTimeout)
	c, rerr := a.Reporter.Credits(rctx)
	cancel()
	if rerr != nil {
		// The adapter's errors carry no key (providerhttp redacts it).
		log.Warn("reading the provider's credits failed; the last reading stands", "component", "credits",
			"provider", a.Provider, "account", a.Key, "error", rerr.Error())
		return true, store.RecordCredits(context.WithoutCancel(ctx), db, a.Key, nil, nil, rerr.Error())
	}
	var reset *time.Time
	if !c.ResetAt.IsZero() {
		reset = &c.ResetAt
	}
	return true, store.RecordCredits(context.WithoutCancel(ctx), db, a.Key, &c.Remaining, reset, "")
}

// AccountRunway is how long an account's last reading lasts at its
// billed calls of the last hour (perHour); false with no credits known or
// nothing billed in the last hour.
func AccountRunway(ctx context.Context, db store.DBTX, row store.CreditsAccount) (left time.Duration, perHour int64, ok bool, err error) {
	if row.Credits == nil {
		return 0, 0, false, nil
	}
	if perHour, err = store.CreditsPace(ctx, db, row.Provider, row.WorkspaceID); err != nil {
		return 0, 0, false, err
	}
	left, ok = Runway(*row.Credits, perHour)
	return left, perHour, ok, nil
}

// alert compares row's runway with its threshold and marks the account
// low or not; with no credits known or no billed call in the last hour
// there is no runway, and the mark stays as it is.
func alert(ctx context.Context, db store.DBTX, cfg Config, row store.CreditsAccount, log *slog.Logger) error {
	under := cfg.AlertUnder(row.Provider)
	if under == 0 {
		if row.Low {
			_, err := store.MarkCreditsLow(ctx, db, row.Account, false, store.CreditsAlert{})
			return err
		}
		return nil
	}
	left, perHour, ok, err := AccountRunway(ctx, db, row)
	if !ok || err != nil {
		return err
	}
	low := left < under
	if low == row.Low {
		return nil
	}
	sent, err := store.MarkCreditsLow(ctx, db, row.Account, low, store.CreditsAlert{
		Runway: FormatRunway(left), PerHour: perHour, AlertUnder: under.String(),
	})
	if sent {
		log.Warn("provider credits running low", "component", "credits", "provider", row.Provider, "account", row.Account,
			"credits_remaining", *row.Credits, "billed_calls_last_hour", perHour, "runway", FormatRunway(left), "alert_under", under.String())
	}
	return err
}
