#!/usr/bin/env bash
# The scale figure for `rindactl status --overdue`: LEADS leads over 20
# workspaces in every enrichment state and ENROLLMENTS enrollments over 10
# campaigns and 18 mailboxes (30 % due, 5 % completed), in a scratch schema
# migrated by rindactl, then the command itself timed RUNS times (a fresh
# process each: connect, every status query, the table). Prints one JSON
# line: {"leads":L,"enrollments":E,"seconds":[...],"median_seconds":M}.
#
#   DATABASE_URL=postgres://... scripts/bench-overdue.sh [LEADS] [ENROLLMENTS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
leads=${1:-1000000}
enrollments=${2:-$leads}
runs=${3:-3}
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
floor_count bench-overdue LEADS "$leads"
floor_count bench-overdue ENROLLMENTS "$enrollments"
floor_count bench-overdue RUNS "$runs"
(( enrollments <= leads )) || { echo "bench-overdue: ENROLLMENTS ($enrollments) must not exceed LEADS ($leads): one enrollment per lead" >&2; exit 2; }
floor_setup bench-overdue
psql "$url" -qX -v ON_ERROR_STOP=1 <<SQL
SET statement_timeout = 0;
INSERT INTO workspaces (name, monthly_usd_ceiling) SELECT 'ws' || g, 1000 FROM generate_series(1, 20) g;
INSERT INTO leads (workspace_id, external_id, email, timezone)
SELECT (SELECT min(id) FROM workspaces) + g % 20, 'x' || g, CASE WHEN g % 7 = 0 THEN NULL ELSE 'l' || g || '@x.test' END,
       (ARRAY['Asia/Seoul', 'Europe/Paris', 'America/New_York'])[1 + g % 3]
FROM generate_series(1, $leads) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, next_attempt_at, negative_cache_until, provider, last_error)
SELECT id, workspace_id, s.status, 1, now() + (id % 600 - 300) * interval '1 second',
       CASE WHEN s.status = 'unreachable' THEN now() + interval '1 day' END,
       'findymail', CASE WHEN id % 50 = 0 THEN 'hunter: rate_limited (HTTP 429)' END
FROM leads, LATERAL (SELECT (ARRAY['pending', 'pending', 'pending', 'enriched', 'enriched', 'enriched',
                                   'not_found', 'unreachable', 'unreachable', 'enrichment_failed'])[1 + id % 10] AS status) s;
INSERT INTO campaigns (workspace_id, name, window_timezone, window_days, window_start, window_end)
SELECT (SELECT min(id) FROM workspaces) + g % 20, 'c' || g, 'lead', '{mon,tue,wed,thu,fri}', '08:00', '18:00' FROM generate_series(1, 10) g;
INSERT INTO mailboxes (workspace_id, address, smtp_url, daily_cap)
SELECT (SELECT min(id) FROM workspaces) + g % 20, 'm' || g || '@x.test', 'smtp://mx', 500 FROM generate_series(1, 18) g;
INSERT INTO campaign_mailboxes SELECT c.id, m.id FROM campaigns c, mailboxes m;
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, next_send_at, mailbox_id)
SELECT c.id, l.id, c.workspace_id, CASE WHEN l.id % 20 = 0 THEN 'completed' ELSE 'active' END,
       now() + (CASE WHEN l.id % 10 < 3 THEN -1 ELSE 1 END) * (l.id % 86400) * interval '1 second',
       (SELECT min(id) FROM mailboxes) + l.id % 18
FROM (SELECT id FROM leads ORDER BY id LIMIT $enrollments) l
JOIN campaigns c ON c.id = (SELECT min(id) FROM campaigns) + l.id % 10;
VACUUM ANALYZE;
SQL

secs=()
for _ in $(seq "$runs"); do
	t0=$(date +%s.%N)
	bin/rindactl status --overdue --database-url "$url" >/dev/null
	t1=$(date +%s.%N)
	secs+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
done
printf '%s\n' "${secs[@]}" | sort -g | awk -v l="$leads" -v e="$enrollments" -v all="$(IFS=,; echo "${secs[*]}")" '
	{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "{\"leads\":%d,\"enrollments\":%d,\"seconds\":[%s],\"median_seconds\":%.3f}\n", l, e, all, m }'
