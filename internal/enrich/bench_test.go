package enrich_test

import (
	"context"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// instantFinder answers at once, so the benchmark measures the tick's own
// pipeline: claim, waterfall, grouped record.
type instantFinder struct{}

func (instantFinder) Name() string { return "instant" }

func (instantFinder) FindEmail(_ context.Context, l enrich.Lead) (enrich.Finding, error) {
	return enrich.Finding{Email: "lead@" + l.Domain, Found: true}, nil
}

func BenchmarkTickPipeline(b *testing.B) {
	const leads = 5000
	e := &env{db: storetest.New(b), log: &testkit.Buffer{}}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		if _, err := e.db.Pool.Exec(ctx, `TRUNCATE leads, lead_enrichment, workspaces, tick_runs CASCADE`); err != nil {
			b.Fatal(err)
		}
		e.seed(b, "bench", leads)
		b.StartTimer()
		rep, err := enrich.RunTick(ctx, e.db.Pool, enrich.TickConfig{Finders: []enrich.Finder{instantFinder{}}, Batch: 500})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Outcomes.Enriched != leads {
			b.Fatalf("enriched %d of %d", rep.Outcomes.Enriched, leads)
		}
	}
	b.ReportMetric(float64(leads*b.N)/b.Elapsed().Seconds(), "leads/s")
}
