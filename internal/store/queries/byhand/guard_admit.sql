-- Admit one provider call in one statement: the breaker gate (claiming the
-- half-open probe once the breaker has expired), a ceiling pre-check, the
-- GCRA token, the spend reservation and the ledger row. Each step runs only
-- when the earlier ones let the call through, so a blocked call consumes
-- nothing; a refused reservation at the ceiling writes ceiling_reached once
-- per workspace, month and ceiling value.
--
-- The commit is durable whatever the server's synchronous_commit
-- (set_config(..., true) holds until this statement's transaction commits):
-- a ledger row lost in a crash while its call is in flight would let the
-- next tick buy the same find again, unseen (issue 24). It costs nothing on
-- a server at the default (on).
--
-- $1 workspace_id, $2 provider, $3 lead_id (0 = none), $4 tick_id,
-- $5 probe owner, $6 probe lease, $7 bucket key ('' = no bucket),
-- $8 emission interval, $9 admission horizon (burst*interval + max wait),
-- $10 cost_usd, $11 the bucket's tolerance (burst*interval): the call's
-- rate slot, kept in call_at, is its new tat less the tolerance.
WITH brk AS (
    SELECT state, open_until, probe_until, reason, retry_after
    FROM breakers
    WHERE workspace_id = $1::bigint AND provider = $2::text
), probe AS (
    UPDATE breakers
    SET state = 'half_open', probe_owner = $5::text, probe_until = now() + $6::interval, updated_at = now()
    WHERE workspace_id = $1::bigint AND provider = $2::text
      AND state <> 'closed' AND open_until <= now()
      AND (probe_owner IS NULL OR probe_until < now())
    RETURNING 1
), ws AS (
    SELECT w.name,
           w.monthly_usd_ceiling AS ceiling,
           coalesce(s.spent_usd, 0) AS spent,
           m.month
    FROM workspaces w
    CROSS JOIN (SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date AS month) m
    LEFT JOIN workspace_spend s ON s.workspace_id = w.id AND s.month = m.month
    WHERE w.id = $1::bigint
), gate AS (
    SELECT CASE
               WHEN EXISTS (SELECT 1 FROM probe) THEN 'probe'
               WHEN coalesce((SELECT state FROM brk), 'closed') = 'closed' THEN 'closed'
               ELSE 'open'
           END AS breaker,
           (SELECT ceiling IS NULL OR spent + $10::numeric <= ceiling FROM ws) AS under_ceiling
), tok AS (
    INSERT INTO rate_limits AS r (key, tat, granted, updated_at)
    SELECT $7::text, now() + $8::interval, true, now()
    FROM gate
    WHERE $7::text <> '' AND gate.breaker <> 'open' AND gate.under_ceiling
    ON CONFLICT (key) DO UPDATE SET
        granted    = greatest(r.tat, now()) + $8::interval <= now() + $9::interval,
        tat        = CASE WHEN greatest(r.tat, now()) + $8::interval <= now() + $9::interval
                          THEN greatest(r.tat, now()) + $8::interval ELSE r.tat END,
        updated_at = now()
    RETURNING tat, granted
), passed AS (
    SELECT 1 AS ok
    FROM gate
    WHERE gate.breaker <> 'open' AND gate.under_ceiling
      AND ($7::text = '' OR EXISTS (SELECT 1 FROM tok WHERE granted))
), spend AS (
    INSERT INTO workspace_spend AS s (workspace_id, month, spent_usd)
    SELECT $1::bigint, ws.month, $10::numeric
    FROM ws, passed
    WHERE $10::numeric > 0
    ON CONFLICT (workspace_id, month) DO UPDATE SET
        spent_usd  = s.spent_usd + excluded.spent_usd,
        updated_at = now()
    WHERE (SELECT monthly_usd_ceiling FROM workspaces WHERE id = $1::bigint) IS NULL
       OR s.spent_usd + excluded.spent_usd <= (SELECT monthly_usd_ceiling FROM workspaces WHERE id = $1::bigint)
    RETURNING spent_usd
), call AS (
    INSERT INTO provider_calls (workspace_id, lead_id, provider, cost_usd, tick_id, call_at)
    SELECT $1::bigint, nullif($3::bigint, 0), $2::text, $10::numeric, nullif($4::text, ''),
           greatest(now(), coalesce((SELECT tat FROM tok) - $11::interval, now()))
    FROM passed
    WHERE $10::numeric = 0 OR EXISTS (SELECT 1 FROM spend)
    RETURNING id
), ceiling_event AS (
    INSERT INTO events (kind, workspace_id, provider, dedupe_key, payload)
    SELECT 'ceiling_reached', $1::bigint, $2::text,
           'ceiling_reached:' || $1::bigint || ':' || to_char(ws.month, 'YYYY-MM') || ':' || ws.ceiling,
           jsonb_build_object(
               'workspace', ws.name, 'provider', $2::text, 'reason', 'ceiling_reached',
               'ceiling_usd', ws.ceiling, 'spent_usd', ws.spent,
               'until', ((ws.month + interval '1 month')::timestamp AT TIME ZONE 'UTC'))
    FROM ws, gate
    WHERE gate.breaker <> 'open'
      AND (NOT gate.under_ceiling
           OR (EXISTS (SELECT 1 FROM passed) AND $10::numeric > 0 AND NOT EXISTS (SELECT 1 FROM spend)))
    ON CONFLICT (dedupe_key) DO NOTHING
)
SELECT gate.breaker,
       (SELECT open_until FROM brk),
       (SELECT probe_until FROM brk),
       (SELECT reason FROM brk),
       (SELECT retry_after FROM brk),
       gate.under_ceiling,
       (SELECT tat FROM tok),
       (SELECT granted FROM tok),
       (SELECT id FROM call),
       ((SELECT month FROM ws) + interval '1 month')::timestamp AT TIME ZONE 'UTC',
       now(),
       set_config('synchronous_commit', 'on', true)
FROM gate;
