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
// at a time, the others use its reading), then checks the runway of each
// (Check). A reading starts only while ctx is live (a tick's deadline or a
// signal ends ctx: no reading starts after them); once started it runs up
// to cfg.ReadTimeout, and cfg.ReadUntil when set. Reading an account
// endpoint costs no credit and writes no ledger row. It returns the
// accounts' readings, for metrics; a failed reading is recorded with the
// account (read_error), not returned.
func Refresh(ctx context.Context, db store.DBTX, cfg Config, accounts []Account, log *slog.Logger) ([]store.CreditsAccount, error) {
	cfg = cfg.withDefaults()
	for _, a := range accounts {
		if ctx.Err() != nil {
			break
		}
		if err := read(ctx, db, cfg, a, log); err != nil {
			return nil, err
		}
	}
	return Check(context.WithoutCancel(ctx), db, cfg, accounts, log)
}

// Check compares the runway of each account of accounts, from its last
// reading less the ledger's calls billed since, with its provider's
// threshold, writing credits_low once per episode; it reads no provider.
// Any process may check at any time (a tick does while it works), so a
// fast burn is seen before the provider's quota answer, not at the next
// reading. It returns the accounts' readings.
func Check(ctx context.Context, db store.DBTX, cfg Config, accounts []Account, log *slog.Logger) ([]store.CreditsAccount, error) {
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
		if err := alert(ctx, db, cfg, row, log); err != nil {
			return out, err
		}
	}
	return out, nil
}

// read reads account a's credits when it is this process's turn.
func read(ctx context.Context, db store.DBTX, cfg Config, a Account, log *slog.Logger) error {
	at, mine, err := store.ClaimCreditsRead(ctx, db, store.CreditsReadClaim{Account: a.Key, Provider: a.Provider, WorkspaceID: a.WorkspaceID, Every: cfg.Every, Lease: cfg.ReadTimeout + 30*time.Second})
	if err != nil || !mine {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ReadTimeout)
	if !cfg.ReadUntil.IsZero() {
		rctx, cancel = context.WithDeadline(rctx, cfg.ReadUntil)
	}
	c, rerr := a.Reporter.Credits(rctx)
	cancel()
	if rerr != nil {
		// The adapter's errors carry no key (providerhttp redacts it).
		log.Warn("reading the provider's credits failed; the last reading stands", "component", "credits",
			"provider", a.Provider, "account", a.Key, "error", rerr.Error())
		return store.RecordCredits(context.WithoutCancel(ctx), db, store.CreditsReading{Account: a.Key, ReadAt: at, ReadError: rerr.Error()})
	}
	var reset *time.Time
	if !c.ResetAt.IsZero() {
		reset = &c.ResetAt
	}
	return store.RecordCredits(context.WithoutCancel(ctx), db, store.CreditsReading{Account: a.Key, ReadAt: at, Credits: &c.Remaining, ResetAt: reset})
}

// Standing is an account's credits as the ledger has them now: its last
// reading less the calls billed since (Left, never below 0), the pace of
// the last hour, and the runway at that pace.
type Standing struct {
	Left        int64
	BilledSince int64
	PerHour     int64
	// Runway is how long Left lasts at PerHour; Known is false with no
	// credits known, or credits left and nothing billed in the last hour.
	Runway time.Duration
	Known  bool
}

// AccountStanding is the standing of provider's account (workspaceID's
// own key, or the host's: nil) whose last reading said credits at at
// (nil: never read).
func AccountStanding(ctx context.Context, db store.DBTX, provider string, workspaceID, credits *int64, at *time.Time) (Standing, error) {
	if credits == nil || at == nil {
		return Standing{}, nil
	}
	perHour, since, err := store.CreditsUsage(ctx, db, provider, workspaceID, *at)
	if err != nil {
		return Standing{}, err
	}
	s := Standing{Left: max(*credits-since, 0), BilledSince: since, PerHour: perHour}
	if s.Left == 0 {
		s.Known = true // out of credits, whatever the pace
		return s, nil
	}
	s.Runway, s.Known = Runway(s.Left, perHour)
	return s, nil
}

// alert compares row's runway with its threshold and marks the account
// low or not; with no runway known the mark stays as it is.
func alert(ctx context.Context, db store.DBTX, cfg Config, row store.CreditsAccount, log *slog.Logger) error {
	under := cfg.AlertUnder(row.Provider)
	if under == 0 {
		if row.Low {
			_, err := store.MarkCreditsLow(ctx, db, row.Account, false, store.CreditsAlert{})
			return err
		}
		return nil
	}
	st, err := AccountStanding(ctx, db, row.Provider, row.WorkspaceID, row.Credits, row.CreditsAt)
	if !st.Known || err != nil {
		return err
	}
	low := st.Runway < under
	if low == row.Low {
		return nil
	}
	sent, err := store.MarkCreditsLow(ctx, db, row.Account, low, store.CreditsAlert{
		Runway: FormatRunway(st.Runway), PerHour: st.PerHour, AlertUnder: under.String(),
	})
	if sent {
		log.Warn("provider credits running low", "component", "credits", "provider", row.Provider, "account", row.Account,
			"credits_remaining", st.Left, "credits_read", *row.Credits, "billed_since_reading", st.BilledSince,
			"billed_calls_last_hour", st.PerHour, "runway", FormatRunway(st.Runway), "alert_under", under.String())
	}
	return err
}
