#!/usr/bin/env bash
# The raw-SQL floor for `rindactl bench email`: the least Postgres work an
# at-most-once send needs on rindactl's schema, with no Go and no SMTP.
# pgbench drains the same due step-1 enrollments as the bench (one-step
# campaign, mailboxes bound round-robin) in batches of 500, each batch:
#   1. claim: lease 500 due rows (FOR UPDATE SKIP LOCKED, oldest first);
#   2. record them 'sending' in sends (the tick does this in small groups,
#      each just before its message's DATA: more statements, never fewer);
#   3. mark them 'sent';
#   4. settle the enrollments (sequence completed, lease released).
# The tick does more per message (fair claim across campaigns and mailbox
# caps, thread and suppression lookups, rendering), so its database cost
# can only be higher; the figure bounds what any implementation of the
# email tick can reach (docs/benchmarks.md).
#
# ROUND (default: the batch) commits step 2 in statements of ROUND rows,
# each its own transaction: with ROUND = MAILBOXES, the floor of an
# implementation that, like the tick, commits each message's 'sending' row
# just before its DATA, one row per mailbox per round, so that a crash
# leaves at most a message or two per mailbox "delivery unknown" instead of
# a whole batch. Prints one JSON line:
# {"steps":N,"mailboxes":M,"clients":C,"round":K,"seconds":S,"sends_per_sec":R,
# "postgres_cpu_us_per_send":P}; P (the CPU of the server's
# postgres processes during the run) is left out when the server is not on
# this machine.
#
#   DATABASE_URL=postgres://... scripts/bench-email-floor.sh [STEPS] [MAILBOXES] [CLIENTS] [ROUND]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-30339}
mailboxes=${2:-18}
clients=${3:-1}
batch=500
round=${4:-$batch}
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
floor_count bench-email-floor STEPS "$steps"
floor_count bench-email-floor MAILBOXES "$mailboxes"
floor_count bench-email-floor CLIENTS "$clients"
floor_count bench-email-floor ROUND "$round"
floor_setup bench-email-floor
# The same rows as `rindactl bench email` loads.
psql "$url" -qX -v ON_ERROR_STOP=1 <<SQL
INSERT INTO workspaces (name) VALUES ('bench');
INSERT INTO campaigns (workspace_id, name) SELECT id, 'bench' FROM workspaces;
INSERT INTO mailboxes (workspace_id, address, smtp_url)
SELECT w.id, 'sdr' || lpad(g::text, 2, '0') || '@bench.example', 'smtp://127.0.0.1:25' FROM workspaces w, generate_series(1, $mailboxes) g;
INSERT INTO campaign_mailboxes SELECT c.id, m.id FROM campaigns c, mailboxes m;
INSERT INTO sequence_steps (campaign_id, step, delay_seconds, subject, body)
SELECT id, 1, 0, 'Quick question, {{.FirstName}}', 'Hi {{.FirstName}}' FROM campaigns;
INSERT INTO leads (workspace_id, external_id, first_name, last_name, company, company_domain, email)
SELECT w.id, 'bench-' || g, 'First' || g, 'Last' || g, 'Company ' || (g % 1000),
       'company' || (g % 1000) || '.example', 'first' || g || '@company' || (g % 1000) || '.example'
FROM workspaces w, generate_series(1, $steps) g;
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, mailbox_id, next_send_at)
SELECT c.id, l.id, l.workspace_id, (SELECT min(id) FROM mailboxes) + l.id % $mailboxes, now() - interval '1 hour'
FROM campaigns c, leads l;
VACUUM ANALYZE;
SQL

cat >"$work/floor.sql" <<'SQL'
WITH claimed AS (
    UPDATE enrollments e
    SET next_send_at = now() + interval '5 minutes', locked_until = now() + interval '5 minutes',
        locked_by = 'floor', updated_at = now()
    WHERE e.id IN (SELECT id FROM enrollments
                   WHERE status = 'active' AND next_send_at <= now()
                   ORDER BY next_send_at LIMIT 500
                   FOR UPDATE SKIP LOCKED)
    RETURNING e.id, e.mailbox_id
) SELECT coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(mailbox_id), '{}') AS mailboxes FROM claimed \gset
SENDING
UPDATE sends SET status = 'sent', sent_at = now()
WHERE enrollment_id = ANY (:ids::bigint[]) AND step = 1 AND status = 'sending';
UPDATE enrollments
SET status = 'completed', current_step = 2, next_send_at = now(), locked_until = NULL, locked_by = NULL, updated_at = now()
WHERE id = ANY (:ids::bigint[]);
SQL

# Step 2, in statements of $round rows (slices of the claimed arrays; the
# last ones of a short batch are empty).
sending=""
for ((lo = 1; lo <= batch; lo += round)); do
	hi=$((lo + round - 1))
	sending+="INSERT INTO sends (enrollment_id, step, mailbox_id, message_id) SELECT u.id, 1, u.mailbox_id, 'floor-' || u.id || '@bench.example' FROM unnest((:ids::bigint[])[$lo:$hi], (:mailboxes::bigint[])[$lo:$hi]) AS u (id, mailbox_id);"$'\n'
done
awk -v s="$sending" '$0 == "SENDING" { printf "%s", s; next } { print }' "$work/floor.sql" >"$work/floor.sql.new"
mv "$work/floor.sql.new" "$work/floor.sql"

# A client's last batch may come back short while another holds rows: one
# batch per client more than an even split, empty claims cost nothing.
per_client=$(( (steps + batch * clients - 1) / (batch * clients) + 1 ))
# Let the setup's sessions end first: one reaped while being read would
# count twice in the first sample.
sleep 0.5
cpu0=$(pgcpu "$pm")
t0=$(date +%s.%N)
out=$("$pgbench" -n -M prepared -c "$clients" -j "$clients" -t "$per_client" -f "$work/floor.sql" "$url" 2>&1) || { echo "$out" >&2; exit 1; }
t1=$(date +%s.%N)
cpu1=$(pgcpu "$pm")
sent=$(psql "$url" -qXAt -c "SELECT count(*) FROM sends WHERE status = 'sent'")
[ "$sent" = "$steps" ] || { echo "bench-email-floor: $sent of $steps steps sent; the floor did not drain the queue" >&2; exit 1; }
awk -v n="$steps" -v m="$mailboxes" -v c="$clients" -v r="$round" -v t0="$t0" -v t1="$t1" -v c0="$cpu0" -v c1="$cpu1" 'BEGIN {
	s = t1 - t0; cpu = ""
	if (c0 != "" && c1 != "") cpu = sprintf(",\"postgres_cpu_us_per_send\":%.1f", (c1 - c0) * 10000 / n)
	printf "{\"steps\":%d,\"mailboxes\":%d,\"clients\":%d,\"round\":%d,\"seconds\":%.3f,\"sends_per_sec\":%.0f%s}\n", n, m, c, r, s, n / s, cpu }'
