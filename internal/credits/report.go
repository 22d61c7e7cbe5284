package credits

import (
	"context"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
)

// Row is one workspace × provider of `rindactl providers`.
type Row struct {
	Workspace string `json:"workspace"`
	Provider  string `json:"provider"`
	// Key is "own" (the workspace's own key, its own credits and bucket)
	// or "host" (the host's key, shared by every workspace without one).
	Key string `json:"key"`
	// CreditsRemaining is the account's credits as last read (nil: never
	// read); CreditsReadAt when; CreditsError why the last reading failed.
	CreditsRemaining *int64     `json:"credits_remaining"`
	CreditsReadAt    *time.Time `json:"credits_read_at"`
	CreditsError     string     `json:"credits_error,omitempty"`
	CreditsResetAt   *time.Time `json:"credits_reset_at,omitempty"`
	// MonthSpentUSD is the workspace's spend on the provider this UTC
	// month; CallsLastHour its calls made in the last hour.
	MonthSpentUSD float64 `json:"month_spent_usd"`
	CallsLastHour int64   `json:"calls_last_hour"`
	// AccountBilledLastHour is the pace the runway goes by: billed calls
	// in the last hour on the whole account (every workspace on the
	// host's key, or this workspace's own key).
	AccountBilledLastHour int64 `json:"account_billed_last_hour"`
	// RunwaySeconds is how long the credits last at that pace (nil: no
	// credits known, or nothing billed in the last hour); Runway says it
	// in words.
	RunwaySeconds *int64 `json:"runway_seconds"`
	Runway        string `json:"runway"`
	// CreditsLow: the runway is under the alert threshold (an episode of
	// credits_low is open).
	CreditsLow bool `json:"credits_low"`
}

// Report lists every workspace (or just workspaceID) × providers from what
// the database holds: the accounts' last readings and the ledger.
func Report(ctx context.Context, db store.DBTX, providers []string, workspaceID *int64) ([]Row, error) {
	rows, err := store.CreditsReport(ctx, db, providers, workspaceID)
	if err != nil {
		return nil, err
	}
	pace := map[string]int64{}
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		row := Row{Workspace: r.Workspace, Provider: r.Provider, Key: "host", CreditsRemaining: r.Credits,
			CreditsReadAt: r.ReadAt, CreditsError: redact.String(r.ReadError), CreditsResetAt: r.ResetAt, MonthSpentUSD: r.MonthSpentUSD,
			CallsLastHour: r.CallsLastHour, CreditsLow: r.Low, Runway: "unknown"}
		var ws *int64
		account := enrich.Account(r.Provider, r.WorkspaceID, r.OwnKey)
		if r.OwnKey {
			row.Key, ws = "own", &r.WorkspaceID
		}
		perHour, seen := pace[account]
		if !seen {
			if perHour, err = store.CreditsPace(ctx, db, r.Provider, ws); err != nil {
				return nil, err
			}
			pace[account] = perHour
		}
		row.AccountBilledLastHour = perHour
		switch left, ok := Runway(deref(r.Credits), perHour); {
		case r.Credits == nil:
		case !ok:
			row.Runway = "no billed call in the last hour"
		default:
			secs := int64(left / time.Second)
			row.RunwaySeconds, row.Runway = &secs, FormatRunway(left)
		}
		out = append(out, row)
	}
	return out, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
