#!/usr/bin/env bash
# The raw-SQL floor for `rindactl bench claim`: pgbench runs the tick's own
# claim statement (internal/store/queries/byhand/enrich_claim.sql: 100 rows, FOR
# UPDATE SKIP LOCKED, with a lease) and then completes the claimed rows by id
# array, on the same tables (the migrations applied in a scratch schema),
# the same data and the same database. Nothing else: no Go, no outcome
# grouping. Prints one JSON line: {"rows":N,"clients":C,"seconds":S,
# "rows_per_sec":R,"postgres_cpu_us_per_row":P}; P (the CPU of the
# server's postgres processes during the run) is left out when the server
# is not on this machine.
#
#   DATABASE_URL=postgres://... scripts/bench-floor.sh [ROWS] [CLIENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-200000}
clients=${2:-4}
batch=100
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
floor_count bench-floor ROWS "$rows"
floor_count bench-floor CLIENTS "$clients"
floor_setup bench-floor
# The same rows as `rindactl bench claim` loads.
psql "$url" -qX -v ON_ERROR_STOP=1 <<SQL
INSERT INTO workspaces (name) VALUES ('bench');
INSERT INTO leads (workspace_id, external_id, first_name, last_name, company, company_domain)
SELECT w.id, 'bench-' || g, 'First' || g, 'Last' || g, 'Company ' || (g % 1000), 'company' || (g % 1000) || '.example'
FROM workspaces w, generate_series(1, $rows) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, next_attempt_at, updated_at)
SELECT id, workspace_id, now() - interval '1 hour' + id * interval '1 microsecond', now() - interval '1 hour' FROM leads;
VACUUM ANALYZE leads;
VACUUM ANALYZE lead_enrichment;
SQL

# The tick's claim with its parameters filled in: batch, lease seconds,
# tick id, any workspace, "updated before this tick started", and, as the
# tick does, the latest due time of the client's previous batch (pgbench
# keeps :after per client; -infinity to start).
claim=$(grep -v '^--' internal/store/queries/byhand/enrich_claim.sql |
	sed -e 's/;[[:space:]]*$//' -e "s|100 /\* batch \*/|$batch|" -e 's/@lease_seconds/300/g' -e "s/@tick_id/'floor'/g" -e 's/@workspace_id/NULL/g' -e 's/@tick_started/now()/g' -e 's/@after/:after/g')
cat >"$work/floor.sql" <<SQL
WITH claimed AS (
$claim
) SELECT coalesce(array_agg(lead_id), '{}') AS ids, coalesce(max(next_attempt_at), '-infinity') AS after FROM claimed \gset
UPDATE lead_enrichment SET status = 'not_found', next_attempt_at = now(), locked_until = NULL, locked_by = NULL, updated_at = now() WHERE lead_id = ANY(:ids::bigint[]);
SQL

per_client=$(( (rows + batch * clients - 1) / (batch * clients) ))
# Let the setup's sessions end first: one reaped while being read would
# count twice in the first sample.
sleep 0.5
cpu0=$(pgcpu "$pm")
out=$("$pgbench" -n -M prepared -D after=-infinity -c "$clients" -j "$clients" -t "$per_client" -f "$work/floor.sql" "$url" 2>&1) || { echo "$out" >&2; exit 1; }
cpu1=$(pgcpu "$pm")
tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out")
left=$(psql "$url" -qXAt -c "SELECT count(*) FROM lead_enrichment WHERE status <> 'not_found'")
[ "$left" = 0 ] || { echo "bench-floor: $left rows not completed; the floor did not drain the queue" >&2; exit 1; }
awk -v rows="$rows" -v c="$clients" -v tps="$tps" -v b="$batch" -v c0="$cpu0" -v c1="$cpu1" 'BEGIN {
	r = tps * b; cpu = ""
	if (c0 != "" && c1 != "") cpu = sprintf(",\"postgres_cpu_us_per_row\":%.1f", (c1 - c0) * 10000 / rows)
	printf "{\"rows\":%d,\"clients\":%d,\"seconds\":%.3f,\"rows_per_sec\":%.0f%s}\n", rows, c, rows / r, r, cpu }'
