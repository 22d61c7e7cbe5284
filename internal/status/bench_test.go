package status_test

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// volumeSQL seeds the volume status must answer in under a second:
// 1,000,000 leads over 20 workspaces in every enrichment state, 100,000
// enrollments over 10 campaigns and 18 mailboxes (30% due), 50,000 sends and
// a day of tick history.
const volumeSQL = `
INSERT INTO workspaces (name, monthly_usd_ceiling) SELECT 'ws' || g, 1000 FROM generate_series(1, 20) g;
INSERT INTO leads (workspace_id, external_id, email, timezone)
SELECT 1 + g % 20, 'x' || g, CASE WHEN g % 7 = 0 THEN NULL ELSE 'l' || g || '@x.test' END,
       (ARRAY['Asia/Seoul', 'Europe/Paris', 'America/New_York'])[1 + g % 3]
FROM generate_series(1, 1000000) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, next_attempt_at, negative_cache_until, provider, last_error, locked_until, locked_by)
SELECT id, workspace_id, s.status, 1,
       :now + (id % 600 - 300) * interval '1 second',
       CASE WHEN s.status = 'unreachable' THEN :now + interval '1 day' END,
       'findymail', CASE WHEN id % 50 = 0 THEN 'hunter: rate_limited (HTTP 429)' END,
       CASE WHEN s.status = 'in_progress' THEN :now + interval '1 minute' END,
       CASE WHEN s.status = 'in_progress' THEN 'bench' END
FROM leads, LATERAL (SELECT (ARRAY['pending', 'pending', 'in_progress', 'enriched', 'enriched', 'enriched',
                                   'not_found', 'unreachable', 'unreachable', 'enrichment_failed'])[1 + id % 10] AS status) s;
INSERT INTO breakers (workspace_id, provider, state, open_until, reason)
SELECT id, 'findymail', 'open', :now + interval '5 minutes', 'quota_exhausted' FROM workspaces WHERE id <= 5;
INSERT INTO provider_calls (workspace_id, provider, state, cost_usd, created_at)
SELECT 1 + g % 20, 'hunter', 'settled', 0.05, :now - (g % 2000) * interval '1 hour' FROM generate_series(1, 200000) g;
INSERT INTO campaigns (workspace_id, name, window_timezone, window_days, window_start, window_end)
SELECT 1 + g % 20, 'c' || g, 'lead', '{mon,tue,wed,thu,fri}', '08:00', '18:00' FROM generate_series(1, 10) g;
INSERT INTO mailboxes (workspace_id, address, smtp_url, daily_cap)
SELECT 1 + g % 20, 'm' || g || '@x.test', 'smtp://mx', 500 FROM generate_series(1, 18) g;
INSERT INTO campaign_mailboxes SELECT c.id, m.id FROM campaigns c, mailboxes m;
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, next_send_at, mailbox_id)
SELECT 1 + g % 10, g, (SELECT workspace_id FROM campaigns WHERE id = 1 + g % 10),
       CASE WHEN g % 20 = 0 THEN 'completed' ELSE 'active' END,
       :now + (CASE WHEN g % 10 < 3 THEN -1 ELSE 1 END) * (g % 86400) * interval '1 second', 1 + g % 18
FROM generate_series(1, 100000) g;
INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, created_at)
SELECT id, 1, mailbox_id, 'b' || id, 'sent', :now - (id % 48) * interval '1 hour' FROM enrollments WHERE id <= 50000;
INSERT INTO tick_runs (kind, tick_id, host, pid, started_at, finished_at, claimed, exit_status)
SELECT k, k || g, 'h', g, :now - g * interval '1 minute', :now - g * interval '1 minute' + interval '5 seconds', 200, 0
FROM generate_series(1, 1440) g, unnest(ARRAY['enrich', 'email']) k;
`

// BenchmarkStatusBuild times the whole status report on 1,000,000 leads and
// 100,000 enrollments (docs/operations.md records the figure).
func BenchmarkStatusBuild(b *testing.B) {
	db := storetest.New(b)
	ctx := context.Background()
	// The seed is one long batch; lift the pool's statement timeout for it.
	seed(b, db, "SET statement_timeout = 0;"+volumeSQL+";RESET statement_timeout", fixedNow)
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var worst time.Duration
	for b.Loop() {
		start := time.Now()
		r, err := status.Build(ctx, db.Pool, fixedNow, status.Filter{})
		if err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(start))
		if r.Enrich.ByStatus["pending"] != 200000 {
			b.Fatalf("pending = %d", r.Enrich.ByStatus["pending"])
		}
	}
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}
