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
	// CreditsReadAgeSeconds is how old the credits figure is; CreditsStale
	// says it is older than RINDA_CREDITS_REFRESH (the last reading
	// failed, or nothing read it since): not a current figure.
	CreditsReadAgeSeconds *int64 `json:"credits_read_age_seconds"`
	CreditsStale          bool   `json:"credits_stale"`
	// BilledSinceRead counts the account's calls billed since the reading;
	// CreditsLeft is the reading less them (never below 0): what the
	// account has left by the ledger, which the runway goes by.
	BilledSinceRead int64  `json:"billed_since_read"`
	CreditsLeft     *int64 `json:"credits_left"`
	// MonthSpentUSD is the workspace's spend on the provider this UTC
	// month; CallsLastHour its calls made in the last hour.
	MonthSpentUSD float64 `json:"month_spent_usd"`
	CallsLastHour int64   `json:"calls_last_hour"`
	// PossibleSecondCharges counts the workspace's calls this month that
	// asked a finder again after its answer for the lead was lost (in
	// doubt, RINDA_IN_DOUBT_RETRY_AFTER): each may have been billed twice.
	PossibleSecondCharges int64 `json:"possible_second_charges"`
	// AccountBilledLastHour is the pace the runway goes by: billed calls
	// in the last hour on the whole account (every workspace on the
	// host's key, or this workspace's own key).
	AccountBilledLastHour int64 `json:"account_billed_last_hour"`
	// RunwaySeconds is how long CreditsLeft lasts at that pace (nil: no
	// credits known, or nothing billed in the last hour); Runway says it
	// in words.
	RunwaySeconds *int64 `json:"runway_seconds"`
	Runway        string `json:"runway"`
	// CreditsLow: the runway is under the alert threshold (an episode of
	// credits_low is open).
	CreditsLow bool `json:"credits_low"`
}

// Report lists every workspace (or just workspaceID) × providers from what
// the database holds: the accounts' last readings less the ledger's calls
// billed since, and the ledger. A reading older than every (the refresh)
// at now is marked stale.
func Report(ctx context.Context, db store.DBTX, providers []string, workspaceID *int64, every time.Duration, now time.Time) ([]Row, error) {
	rows, err := store.CreditsReport(ctx, db, providers, workspaceID)
	if err != nil {
		return nil, err
	}
	standing := map[string]Standing{}
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		row := Row{Workspace: r.Workspace, Provider: r.Provider, Key: "host", CreditsRemaining: r.Credits,
			CreditsReadAt: r.ReadAt, CreditsError: redact.String(r.ReadError), CreditsResetAt: r.ResetAt, MonthSpentUSD: r.MonthSpentUSD,
			CallsLastHour: r.CallsLastHour, PossibleSecondCharges: r.SecondChargesMonth, CreditsLow: r.Low, Runway: "unknown"}
		var ws *int64
		account := enrich.Account(r.Provider, r.WorkspaceID, r.OwnKey)
		if r.OwnKey {
			row.Key, ws = "own", &r.WorkspaceID
		}
		st, seen := standing[account]
		if !seen {
			if st, err = AccountStanding(ctx, db, r.Provider, ws, r.Credits, r.CreditsAt); err != nil {
				return nil, err
			}
			standing[account] = st
		}
		row.AccountBilledLastHour, row.BilledSinceRead = st.PerHour, st.BilledSince
		if r.Credits != nil && r.CreditsAt != nil {
			left, age := st.Left, int64(now.Sub(*r.CreditsAt)/time.Second)
			row.CreditsLeft, row.CreditsReadAgeSeconds = &left, &age
			row.CreditsStale = now.Sub(*r.CreditsAt) > every
		}
		switch {
		case row.CreditsLeft == nil:
		case !st.Known:
			row.Runway = "no billed call in the last hour"
		default:
			secs := int64(st.Runway / time.Second)
			row.RunwaySeconds, row.Runway = &secs, FormatRunway(st.Runway)
		}
		out = append(out, row)
	}
	return out, nil
}
