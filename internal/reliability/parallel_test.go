package reliability

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich/enrichtest"

	"golang.org/x/sync/errgroup"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// parallelTicks is how many enrich ticks run at once, as on eight hosts.
const parallelTicks = 8

// TestParallelEnrichTicksProcessEachLeadOnce runs eight enrich ticks at
// once over the same backlog, several rounds, and counts the provider
// requests per lead: exactly one each round.
func TestParallelEnrichTicksProcessEachLeadOnce(t *testing.T) {
	t.Parallel()
	// At the shipped buckets (Hunter 8/s, shared by the parallel ticks) a
	// short run stays small; the full run is about claims at scale.
	leads, rounds := iterations(80, 50000), iterations(2, 3)
	db := storetest.New(t)
	hunter := providertest.NewHunter()
	t.Cleanup(hunter.Close)

	batch := make([]store.LeadImport, leads)
	for i := range batch {
		batch[i] = store.LeadImport{ExternalID: fmt.Sprint("p-", i), FirstName: fmt.Sprint("Ada", i), LastName: "Lovelace", Domain: fmt.Sprintf("co%d.example", i)}
	}
	if _, err := enrichtest.ImportLeads(context.Background(), db.Pool, "acme", batch); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": db.TickURL()}
	for k, v := range hunter.Env("k") {
		env[k] = v
	}
	if full() {
		// 50,000 leads at 8/s would take hours; the full run is about
		// claims, not pacing.
		env["RINDA_HUNTER_RATE"] = "off"
	}

	for round := range rounds {
		// Forget what the last round found, so every lead needs a call.
		sqlExec(t, db, `UPDATE leads SET email = NULL, email_source = NULL`)
		requeueAll(t, db)
		hunter.Reset()
		ticks := 0
		var last result
		for queryInt(t, db, `SELECT count(*) FROM lead_enrichment WHERE status = 'pending' AND next_attempt_at <= now()`) > 0 {
			if ticks >= 10*parallelTicks {
				t.Fatalf("round %d: leads still due after %d ticks: %v\nlast tick: %s", round, ticks, statusCounts(t, db), last)
			}
			var g errgroup.Group
			results := make([]result, parallelTicks)
			for i := range parallelTicks {
				g.Go(func() error {
					results[i] = rindactl(t, env, "enrich", "tick", "--providers", "hunter", "--max-duration", "50s")
					return nil
				})
			}
			g.Wait()
			last = results[0]
			for _, res := range results {
				if res.code != 0 {
					t.Fatalf("round %d: a parallel tick failed: %s", round, res)
				}
			}
			ticks += parallelTicks
			time.Sleep(10 * time.Millisecond) // the next ticks start after the rows' updates
		}
		calls := perLead(hunter.Requests())
		twice := 0
		for _, n := range calls {
			if n > 1 {
				twice++
			}
		}
		if len(calls) != leads || twice != 0 {
			t.Errorf("round %d: %d of %d leads reached the provider, %d of them more than once", round, len(calls), leads, twice)
		}
		if bad := queryInt(t, db, `SELECT count(*) FROM lead_enrichment WHERE status NOT IN ('enriched', 'not_found')`); bad != 0 {
			t.Errorf("round %d: %d leads not processed: %v", round, bad, statusCounts(t, db))
		}
	}
	figure(t, "parallel_ticks", parallelTicks)
	figure(t, "parallel_leads", leads)
	figure(t, "parallel_rounds", rounds)
	figure(t, "parallel_duplicates", 0) // any duplicate fails the test above
}
