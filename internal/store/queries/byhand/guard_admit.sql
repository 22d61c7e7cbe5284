-- Admit a group of provider calls for one (workspace, provider) in one
-- statement, as if they were admitted one after another in array order:
-- the breaker gate (the first call claims the half-open probe once the
-- breaker has expired; the others wait for its verdict), the ceiling, the
-- GCRA tokens, the spend reservations and the ledger rows. The bucket row
-- and the month's spend row are locked (in that order, as every admission
-- locks them) and the calls admitted are the longest leading run that fits
-- both: call n needs spent + n*cost within the ceiling and its slot,
-- max(tat, now) + n*interval, within its own horizon. Nothing is consumed
-- for a call refused; a refusal at the ceiling writes ceiling_reached once
-- per workspace, month and ceiling value, and says whether only calls in
-- flight cause it (the last column).
--
-- The commit is durable whatever the server's synchronous_commit
-- (set_config(..., true) holds until this statement's transaction commits):
-- a ledger row lost in a crash while its call is in flight would let the
-- next tick buy the same find again, unseen (issue 24). It costs nothing on
-- a server at the default (on). Each ledger row keeps in call_at when its
-- call may go out (its rate slot), so a takeover can tell a call killed
-- while it waited (never made) from one that may have gone out.
--
-- The locked rows must exist: when the bucket row or the month's spend row
-- is missing, nothing is admitted and "missing" says so; the caller
-- creates them (guard_admit_rows) and runs the statement again.
--
-- @lead_ids: 0 = none; @bucket_key: '' = no bucket; @interval: the emission
-- interval; @horizons: admission horizons (burst*interval + max wait);
-- @tolerance: the bucket's tolerance (burst*interval: a call's slot less it
-- is when the call goes out); @ceiling: whether the ceiling holds.
-- (always: see ws). Arrays are in admission order, one element per call.
WITH req AS MATERIALIZED (
    SELECT r.lead_id, r.horizon, r.ord
    FROM unnest(@lead_ids::bigint[], @horizons::interval[]) WITH ORDINALITY AS r(lead_id, horizon, ord)
), brk AS MATERIALIZED (
    SELECT state, open_until, probe_until, reason, retry_after
    FROM breakers
    WHERE workspace_id = @workspace_id::bigint AND provider = @provider::text
), probe AS (
    UPDATE breakers
    SET state = 'half_open', probe_owner = (@probe_owners::text[])[1], probe_until = now() + @probe_lease::interval, updated_at = now()
    WHERE workspace_id = @workspace_id::bigint AND provider = @provider::text
      AND state <> 'closed' AND open_until <= now()
      AND (probe_owner IS NULL OR probe_until < now())
    RETURNING probe_until
), gate AS MATERIALIZED (
    SELECT CASE
               WHEN EXISTS (SELECT 1 FROM probe) THEN 'probe'
               WHEN coalesce((SELECT state FROM brk), 'closed') = 'closed' THEN 'closed'
               ELSE 'open'
           END AS breaker
), through AS MATERIALIZED (
    -- The calls past the breaker, numbered: all of them when it is
    -- closed, only the prober when this statement claimed the probe.
    SELECT req.ord, req.lead_id, req.horizon, row_number() OVER (ORDER BY req.ord) AS n
    FROM req, gate
    WHERE gate.breaker = 'closed' OR (gate.breaker = 'probe' AND req.ord = 1)
), ws AS MATERIALIZED (
    -- @ceiling is true but in the invariant harness's broken build that
    -- admits whatever the ceiling (internal/faults, Spend).
    SELECT w.name, CASE WHEN @ceiling::boolean THEN w.monthly_usd_ceiling END AS ceiling, m.month
    FROM workspaces w
    CROSS JOIN (SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date AS month) m
    WHERE w.id = @workspace_id::bigint
), bucket AS MATERIALIZED (
    SELECT tat FROM rate_limits
    WHERE key = @bucket_key::text AND @bucket_key::text <> '' AND EXISTS (SELECT 1 FROM through)
    FOR UPDATE
), spent AS MATERIALIZED (
    -- Locked after the bucket (the subquery runs first), so admissions
    -- never wait for each other in opposite orders.
    SELECT s.spent_usd
    FROM workspace_spend s, ws
    WHERE s.workspace_id = @workspace_id::bigint AND s.month = ws.month
      AND @cost_usd::numeric > 0 AND EXISTS (SELECT 1 FROM through)
      AND (SELECT count(*) FROM bucket) >= 0
    FOR UPDATE OF s
), cur AS MATERIALIZED (
    -- What the calls are admitted against: the locked spend (a free call
    -- reserves nothing, so the ceiling is only read for it) and tat, and
    -- whether a row to lock is missing.
    SELECT coalesce((SELECT spent_usd FROM spent),
                    (SELECT s.spent_usd FROM workspace_spend s, ws WHERE s.workspace_id = @workspace_id::bigint AND s.month = ws.month),
                    0) AS spent,
           (SELECT tat FROM bucket) AS tat,
           EXISTS (SELECT 1 FROM through)
             AND ((@bucket_key::text <> '' AND NOT EXISTS (SELECT 1 FROM bucket))
                  OR (@cost_usd::numeric > 0 AND NOT EXISTS (SELECT 1 FROM spent))) AS missing
), decided AS MATERIALIZED (
    -- Call n fits when spent + n*cost is within the ceiling and its slot
    -- within its horizon; the calls admitted are the leading run that fits.
    SELECT f.ord, f.lead_id, f.n, f.under_ceiling, f.slot,
           NOT f.missing AND bool_and(f.under_ceiling AND f.in_time) OVER (ORDER BY f.n) AS admitted
    FROM (
        SELECT t.ord, t.lead_id, t.n, cur.missing,
               ws.ceiling IS NULL OR cur.spent + t.n * @cost_usd::numeric <= ws.ceiling AS under_ceiling,
               greatest(cur.tat, now()) + t.n * @interval::interval AS slot,
               @bucket_key::text = '' OR greatest(cur.tat, now()) + t.n * @interval::interval <= now() + t.horizon AS in_time
        FROM through t, ws, cur
    ) f
), in_flight AS MATERIALIZED (
    -- The month's spend reserved by calls still in flight, read only when
    -- a call is refused at the ceiling: a miss among them is refunded when
    -- it settles, so a refusal they alone cause is a wait, not a verdict
    -- until next month (provider_calls_reserved_workspace_idx holds only
    -- the calls in flight, however long the ledger).
    SELECT coalesce(sum(pc.cost_usd), 0) AS usd
    FROM provider_calls pc, ws
    WHERE pc.workspace_id = @workspace_id::bigint AND pc.state = 'reserved'
      AND pc.created_at >= ws.month::timestamp AT TIME ZONE 'UTC'
      AND EXISTS (SELECT 1 FROM decided WHERE NOT under_ceiling)
), taken AS MATERIALIZED (
    SELECT count(*) FILTER (WHERE admitted) AS k, max(slot) FILTER (WHERE admitted) AS last_slot
    FROM decided
), tok AS (
    UPDATE rate_limits r
    SET tat = taken.last_slot, granted = true, updated_at = now()
    FROM taken
    WHERE r.key = @bucket_key::text AND @bucket_key::text <> '' AND taken.k > 0
    RETURNING r.tat
), spend AS (
    UPDATE workspace_spend s
    SET spent_usd = cur.spent + taken.k * @cost_usd::numeric, updated_at = now()
    FROM taken, cur, ws
    WHERE s.workspace_id = @workspace_id::bigint AND s.month = ws.month AND @cost_usd::numeric > 0 AND taken.k > 0
    RETURNING s.spent_usd
), call AS (
    INSERT INTO provider_calls (workspace_id, lead_id, provider, cost_usd, tick_id, call_at)
    SELECT @workspace_id::bigint, nullif(d.lead_id, 0), @provider::text, @cost_usd::numeric, nullif(@tick_id::text, ''),
           CASE WHEN @bucket_key::text = '' THEN now() ELSE greatest(now(), d.slot - @tolerance::interval) END
    FROM decided d
    WHERE d.admitted
    ORDER BY d.n
    RETURNING id
), ids AS (
    -- Identity values rise in insertion order: the k-th id is the k-th call.
    SELECT id, row_number() OVER (ORDER BY id) AS n FROM call
), ceiling_event AS (
    INSERT INTO events (kind, workspace_id, provider, dedupe_key, payload)
    SELECT 'ceiling_reached', @workspace_id::bigint, @provider::text,
           'ceiling_reached:' || @workspace_id::bigint || ':' || to_char(ws.month, 'YYYY-MM') || ':' || ws.ceiling,
           jsonb_build_object(
               'workspace', ws.name, 'provider', @provider::text, 'reason', 'ceiling_reached',
               'ceiling_usd', ws.ceiling, 'spent_usd', cur.spent,
               'until', ((ws.month + interval '1 month')::timestamp AT TIME ZONE 'UTC'))
    FROM ws, cur
    WHERE NOT cur.missing AND EXISTS (SELECT 1 FROM decided WHERE NOT under_ceiling)
    ON CONFLICT (dedupe_key) DO NOTHING
)
SELECT CASE WHEN gate.breaker = 'probe' AND req.ord > 1 THEN 'open' ELSE gate.breaker END,
       (SELECT open_until FROM brk),
       CASE WHEN gate.breaker = 'probe' THEN (SELECT probe_until FROM probe) ELSE (SELECT probe_until FROM brk) END,
       (SELECT reason FROM brk),
       (SELECT retry_after FROM brk),
       coalesce(d.under_ceiling, (SELECT ws.ceiling IS NULL OR cur.spent + @cost_usd::numeric <= ws.ceiling FROM ws)),
       CASE WHEN d.admitted THEN d.slot ELSE coalesce((SELECT tat FROM tok), cur.tat) END,
       CASE WHEN @bucket_key::text = '' OR d.ord IS NULL THEN NULL ELSE coalesce(d.admitted, false) END,
       ids.id,
       ((SELECT month FROM ws) + interval '1 month')::timestamp AT TIME ZONE 'UTC',
       now(),
       cur.missing,
       set_config('synchronous_commit', 'on', true),
       -- Refused at the ceiling, but would fit were the calls in flight
       -- refunded (this statement's own admissions are in neither).
       coalesce(NOT d.under_ceiling, false)
         AND (SELECT cur.spent - f.usd + @cost_usd::numeric <= ws.ceiling FROM ws, in_flight f)
FROM req
CROSS JOIN gate
CROSS JOIN cur
LEFT JOIN decided d ON d.ord = req.ord
LEFT JOIN ids ON d.admitted AND ids.n = d.n
ORDER BY req.ord;
