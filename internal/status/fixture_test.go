package status_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

// fixedNow is the clock every fixture and golden file is taken at: a Friday,
// 14:55 in Seoul, 05:55 UTC.
var fixedNow = time.Date(2026, 6, 5, 5, 55, 0, 0, time.UTC)

// incidentSQL seeds the morning of the incident, relative to :now: one
// workspace whose findymail quota ran out (open breaker, unreachable leads),
// one over its ceiling, three mailboxes (one at its cap, one paused), two
// campaigns (one outside its window) and some tick history.
const incidentSQL = `
INSERT INTO workspaces (name, monthly_usd_ceiling) VALUES ('acme', 500), ('beta', 10);

INSERT INTO leads (workspace_id, external_id, email, timezone)
SELECT 1, 'crm-' || g, CASE WHEN g % 10 = 0 THEN NULL ELSE 'lead' || g || '@example.com' END,
       CASE WHEN g % 2 = 0 THEN 'Asia/Seoul' ELSE 'America/New_York' END
FROM generate_series(1, 60) g;
INSERT INTO leads (workspace_id, external_id, email) SELECT 2, 'b-' || g, NULL FROM generate_series(1, 5) g;

-- acme: 20 unreachable (findymail quota), 10 pending due, 5 pending backing
-- off after a rate limit, 1 in progress, 10 enriched, 4 not_found,
-- 2 enrichment_failed; beta: 5 pending held by its ceiling.
INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, next_attempt_at, negative_cache_until, provider, last_error, locked_until, locked_by)
SELECT g, 1, 'unreachable', 1, :now + interval '23 hours', :now + interval '23 hours', 'findymail',
       'findymail: quota_exhausted (HTTP 429): monthly credits used', NULL, NULL
FROM generate_series(1, 20) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, next_attempt_at)
SELECT g, 1, 'pending', :now - interval '5 minutes' FROM generate_series(21, 30) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, next_attempt_at, last_error, provider)
SELECT g, 1, 'pending', 2, :now + interval '40 seconds', 'hunter: rate_limited (HTTP 429); retry after 40s', 'hunter'
FROM generate_series(31, 35) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, next_attempt_at, locked_until, locked_by)
VALUES (36, 1, 'in_progress', 1, :now + interval '2 minutes', :now + interval '2 minutes', 'enrich-host1-42');
INSERT INTO lead_enrichment (lead_id, workspace_id, status, provider)
SELECT g, 1, 'enriched', 'hunter' FROM generate_series(37, 46) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status) SELECT g, 1, 'not_found' FROM generate_series(47, 50) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, last_error)
SELECT g, 1, 'enrichment_failed', 5, 'hunter: unavailable (HTTP 503)' FROM generate_series(51, 52) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, next_attempt_at)
SELECT g, 2, 'pending', :now - interval '1 minute' FROM generate_series(61, 65) g;

INSERT INTO breakers (workspace_id, provider, state, open_until, reason, opened_at)
VALUES (1, 'findymail', 'open', :now + interval '10 minutes', 'quota_exhausted: HTTP 429', :now - interval '20 minutes'),
       (1, 'hunter', 'closed', NULL, NULL, NULL);

INSERT INTO provider_calls (workspace_id, provider, state, cost_usd, created_at)
VALUES (1, 'hunter', 'settled', 123.45, :now - interval '2 days'),
       (1, 'findymail', 'refunded', 50, :now - interval '1 hour'),
       (1, 'hunter', 'settled', 999, :now - interval '40 days'),
       (2, 'hunter', 'settled', 1, :now - interval '3 days');
-- beta's month-to-date counter (the guards' ceiling check) wins over its ledger.
INSERT INTO workspace_spend (workspace_id, month, spent_usd) VALUES (2, '2026-06-01', 12.5), (2, '2026-05-01', 99);

INSERT INTO campaigns (workspace_id, name, window_timezone, window_days, window_start, window_end)
VALUES (1, 'q3-outbound', 'lead', '{mon,tue,wed,thu,fri}', '09:00', '17:00'),
       (1, 'night-shift', 'UTC', '{mon,tue,wed,thu,fri}', '20:00', '22:00');
INSERT INTO sequence_steps (campaign_id, step, delay_seconds, subject, body)
VALUES (1, 1, 0, 'Hi', 'Hello'), (1, 2, 86400, 'Re: Hi', 'Again'), (2, 1, 0, 'Hi', 'Hello');

INSERT INTO mailboxes (workspace_id, address, smtp_url, daily_cap, paused_until, pause_reason)
VALUES (1, 'ana@acme.test', 'smtp://mx.acme.test', 35, NULL, NULL),
       (1, 'bo@acme.test', 'smtp://mx.acme.test', 0, NULL, NULL),
       (1, 'cy@acme.test', 'smtp://mx.acme.test', 50, :now + interval '1 hour', 'daily limit reached (SMTP 421 4.7.0)');
INSERT INTO campaign_mailboxes VALUES (1, 1), (1, 2), (1, 3), (2, 2);

-- ana sent 30 of 35 in the last 24 hours (and 10 more two days ago).
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, current_step, next_send_at, mailbox_id)
SELECT 1, g, 1, 'completed', 2, :now - interval '3 days', 1 FROM generate_series(1, 30) g;
INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, created_at, sent_at)
SELECT id, 1, 1, 'm-' || id, 'sent', :now - interval '2 hours', :now - interval '2 hours' FROM enrollments;

-- q3-outbound due: 28 on ana (from 3 hours ago), 2 on bo, 5 on paused cy,
-- 3 on leads without an address; night-shift: 4 due outside its window.
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, current_step, next_send_at, mailbox_id)
SELECT 1, g, 1, 1, :now - interval '3 hours' + g * interval '1 minute', 1 FROM generate_series(31, 59) g WHERE g % 10 <> 0;
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, current_step, next_send_at, mailbox_id)
SELECT 2, g, 1, 1, :now - interval '10 minutes', 2 FROM generate_series(1, 4) g;
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, current_step, next_send_at, mailbox_id)
SELECT 1, g, 1, 2, :now - interval '1 minute', 2 FROM generate_series(1, 2) g
ON CONFLICT (campaign_id, lead_id) DO UPDATE SET status = 'active', current_step = 2, next_send_at = EXCLUDED.next_send_at, mailbox_id = 2;
UPDATE enrollments SET mailbox_id = 3 WHERE campaign_id = 1 AND lead_id BETWEEN 31 AND 36;
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, current_step, next_send_at, mailbox_id)
SELECT 1, g, 1, 1, :now - interval '30 minutes', 1 FROM generate_series(10, 30, 10) g
ON CONFLICT (campaign_id, lead_id) DO UPDATE SET status = 'active', current_step = 1, next_send_at = EXCLUDED.next_send_at;
UPDATE leads SET email = NULL WHERE id IN (10, 20, 30);
-- one scheduled for tomorrow, one failed
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, current_step, next_send_at, mailbox_id)
VALUES (1, 60, 1, 1, :now + interval '1 day', 2);
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, current_step, next_send_at, mailbox_id, attempts, last_error)
VALUES (2, 5, 1, 'failed', 1, :now - interval '2 hours', 2, 5, '550 5.1.1 mailbox unknown');
-- two of ana's sends hard-bounced later (DSNs read by the inbox tick)
UPDATE sends SET bounced_at = :now - interval '10 minutes' WHERE id IN (SELECT min(id) FROM sends UNION SELECT max(id) FROM sends);

INSERT INTO tick_runs (kind, tick_id, host, pid, started_at, finished_at, claimed, counts, exit_status, error)
VALUES ('email', 'email-1', 'host1', 10, :now - interval '3 minutes', :now - interval '3 minutes' + interval '4 seconds', 20, '{"sent": 20}', 0, NULL),
       ('email', 'email-2', 'host1', 11, :now - interval '2 minutes', :now - interval '2 minutes' + interval '5 seconds', 25, '{"sent": 25}', 0, NULL),
       ('email', 'email-3', 'host1', 12, :now - interval '1 minute', :now - interval '1 minute' + interval '5 seconds', 10, '{"sent": 10}', 0, NULL),
       ('enrich', 'enrich-1', 'host1', 20, :now - interval '2 minutes', :now - interval '1 minute', 200, '{"unreachable": 20}', 0, NULL),
       ('enrich', 'enrich-2', 'host2', 21, :now - interval '90 minutes', :now - interval '89 minutes', 0, '{}', 1, 'database: lock timeout'),
       ('enrich', 'enrich-host1-42', 'host1', 22, :now - interval '30 seconds', NULL, 1, '{}', NULL, NULL);
`

// seed runs sql with :now replaced by the fixed clock.
func seed(t testing.TB, db *storetest.DB, sql string, now time.Time) {
	t.Helper()
	lit := "'" + now.UTC().Format(time.RFC3339) + "'::timestamptz"
	if _, err := db.Pool.Exec(context.Background(), strings.ReplaceAll(sql, ":now", lit)); err != nil {
		t.Fatalf("seed: %v", err)
	}
}
