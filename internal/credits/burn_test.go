package credits_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/credits"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 39: 150 credits burned in 20 s of provider time. A `providers` run
// read the account (150, nothing billed yet) and so took the refresh slot;
// the ticks burning the credits then find no reading due. Their checks must
// still see the burn: the runway goes by the reading less the ledger's
// calls billed since, so credits_low is raised before the 151st call (the
// provider's quota answer, a 429). Provider time is simulated: the ledger's
// calls are spread over the 20 s after the reading, and a check follows
// each, so nothing depends on how fast this machine runs. Afterwards
// `providers` shows the account out of credits, not the reading's 150 and a
// runway of about an hour, and once the reading is older than the refresh,
// says so. Before the fix only the process that took a reading checked its
// runway, by the reading alone: no alert at all.
func TestFastBurnAlertsBeforeTheQuotaAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	hunter := providertest.NewHunter()
	t.Cleanup(hunter.Close)
	const credit = 150
	hunter.SetCreditsDefault(credit)
	env := hunter.Env("burn")
	finder, err := provider.NewFinder("hunter", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	accounts := credits.AccountsOf([]any{finder}, nil, nil)
	cfg, err := credits.ConfigFromEnv(func(string) string { return "" }, "hunter")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	var ws int64
	if err := db.Pool.QueryRow(ctx, `INSERT INTO workspaces (name) VALUES ('acme') RETURNING id`).Scan(&ws); err != nil {
		t.Fatal(err)
	}

	// The providers run: one reading, 150 credits.
	if _, err := credits.Refresh(ctx, db.Pool, cfg, accounts, log); err != nil {
		t.Fatal(err)
	}
	// The reading was taken 20 s of provider time ago.
	if _, err := db.Pool.Exec(ctx, `UPDATE provider_credits SET read_at = now() - interval '20 seconds',
		credits_at = now() - interval '20 seconds'`); err != nil {
		t.Fatal(err)
	}
	alertAt := 0
	for i := 1; i <= credit; i++ {
		// Call i of 150, billed i/150 of the 20 s after the reading.
		if _, err := db.Pool.Exec(ctx, `INSERT INTO provider_calls (workspace_id, provider, state, cost_usd, outcome, created_at, settled_at)
			SELECT $1, 'hunter', 'settled', 0.049, 'found', c.credits_at + $2 * interval '20 seconds' / 150, now()
			FROM provider_credits c WHERE c.account = 'hunter'`, ws, i); err != nil {
			t.Fatal(err)
		}
		// A tick's check (and its start's refresh: nothing is due).
		if _, err := credits.Refresh(ctx, db.Pool, cfg, accounts, log); err != nil {
			t.Fatal(err)
		}
		var alerts int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE kind = 'credits_low'`).Scan(&alerts); err != nil {
			t.Fatal(err)
		}
		if alerts > 0 && alertAt == 0 {
			alertAt = i
		}
	}
	if alertAt == 0 {
		t.Fatalf("no credits_low after %d credits were billed: the quota answer (429) comes first", credit)
	}
	t.Logf("credits_low after call %d of %d", alertAt, credit)
	if n := hunter.CreditReads(); n != 1 {
		t.Errorf("Hunter's account endpoint read %d times, want once (the refresh)", n)
	}

	// One of them asked Hunter again after its answer for the lead was
	// lost (in doubt): a possible second charge, shown as such.
	if _, err := db.Pool.Exec(ctx, `UPDATE provider_calls SET second_charge = true
		WHERE id = (SELECT min(id) FROM provider_calls)`); err != nil {
		t.Fatal(err)
	}
	rows, err := credits.Report(ctx, db.Pool, []string{"hunter"}, nil, cfg.Every, time.Now())
	if err != nil || len(rows) != 1 {
		t.Fatalf("report %+v, %v: want acme/hunter", rows, err)
	}
	r := rows[0]
	if r.Runway != "out of credits" || r.CreditsLeft == nil || *r.CreditsLeft != 0 || r.BilledSinceRead != credit || r.CreditsStale {
		t.Errorf("report %+v (left %v): want out of credits, 0 left, %d billed since a fresh reading", r, deref(r.CreditsLeft), credit)
	}
	if r.PossibleSecondCharges != 1 {
		t.Errorf("report shows %d possible second charges, want the 1 in the ledger", r.PossibleSecondCharges)
	}
	// Time passing without a reading: the figure is stale, and said so.
	if _, err := db.Pool.Exec(ctx, `UPDATE provider_credits SET read_at = read_at - interval '10 minutes',
		credits_at = credits_at - interval '10 minutes'`); err != nil {
		t.Fatal(err)
	}
	rows, err = credits.Report(ctx, db.Pool, []string{"hunter"}, nil, cfg.Every, time.Now())
	if err != nil || len(rows) != 1 || !rows[0].CreditsStale || rows[0].CreditsReadAgeSeconds == nil || *rows[0].CreditsReadAgeSeconds < 600 {
		t.Errorf("report %+v, %v: want the 10-minute-old reading marked stale with its age", rows, err)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
