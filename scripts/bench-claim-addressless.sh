#!/usr/bin/env bash
# The email claim beside enrollments whose leads have no address yet (issue
# 27): ADDRESSLESS such enrollments, due first, and 50 with an address in
# one campaign, in a scratch schema migrated by rindactl; then the claim
# (batch 100) with and without its "AND e.has_address" predicate,
# interleaved RUNS times each under EXPLAIN ANALYZE in a rolled-back
# transaction. Prints one JSON line with each run's execution time in ms:
# {"addressless":N,"with_index_ms":[...],"without_ms":[...]}.
#
#   DATABASE_URL=postgres://... scripts/bench-claim-addressless.sh [ADDRESSLESS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
addressless=${1:-100000}
runs=${2:-5}
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
floor_count bench-claim-addressless ADDRESSLESS "$addressless"
floor_count bench-claim-addressless RUNS "$runs"
floor_setup bench-claim-addressless
claim=internal/store/queries/byhand/email_claim.sql
grep -q '^          AND e.has_address$' "$claim" || { echo "bench-claim-addressless: $claim has no 'AND e.has_address' line to compare without" >&2; exit 1; }
{
	cat <<SQL
SET statement_timeout = 0;
INSERT INTO workspaces (name) VALUES ('acme');
INSERT INTO campaigns (workspace_id, name) SELECT id, 'q4' FROM workspaces;
INSERT INTO mailboxes (workspace_id, address, smtp_url) SELECT id, 'sdr01@acme.test', 'smtp://127.0.0.1:1' FROM workspaces;
INSERT INTO campaign_mailboxes SELECT c.id, m.id FROM campaigns c, mailboxes m;
INSERT INTO leads (workspace_id, external_id, first_name, company_domain, email)
SELECT w.id, 'p' || g, 'F', 'x.example', CASE WHEN g > $addressless THEN 'p' || g || '@x.example' END
FROM workspaces w, generate_series(1, $addressless + 50) g;
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, mailbox_id, next_send_at)
SELECT cm.campaign_id, l.id, l.workspace_id, cm.mailbox_id,
       CASE WHEN l.email IS NULL THEN now() - interval '2 days' ELSE now() - interval '1 hour' END
FROM campaign_mailboxes cm, leads l;
VACUUM ANALYZE;
SQL
	# The claim names its parameters (@batch, ...; store.byName binds them
	# for pgx); PREPARE numbers them.
	types="int, interval, text, bigint[], bigint[], bigint[], boolean"
	positional='s/@batch/$1/g; s/@lease/$2/g; s/@tick_id/$3/g; s/@locked/$4/g; s/@served/$5/g; s/@rooms/$6/g; s/@stopped_follow_ups/$7/g; s/;[[:space:]]*$//'
	echo "PREPARE claim_with($types) AS"
	sed "$positional" "$claim"; echo ';'
	echo "PREPARE claim_without($types) AS"
	grep -v '^          AND e.has_address$' "$claim" | sed "$positional"; echo ';'
	# The scratch schema's one mailbox (id 1), served and locked, with room
	# for the batch.
	for _ in $(seq "$runs"); do
		for q in claim_without claim_with; do
			echo "BEGIN; EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) EXECUTE $q(100, '1 minute', 'bench', '{1}', '{1}', '{100}', false); ROLLBACK;"
		done
	done
} | psql "$url" -qXAt -v ON_ERROR_STOP=1 | grep -o '"Execution Time": [0-9.]*' | awk -v n="$addressless" '
	{ t[NR] = $3 }
	END {
		printf "{\"addressless\":%d,\"with_index_ms\":[", n
		for (i = 2; i <= NR; i += 2) printf "%s%s", (i > 2 ? "," : ""), t[i]
		printf "],\"without_ms\":["
		for (i = 1; i <= NR; i += 2) printf "%s%s", (i > 1 ? "," : ""), t[i]
		print "]}"
	}'
