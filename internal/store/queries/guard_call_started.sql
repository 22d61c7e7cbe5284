-- name: GuardCallStarted :one
-- Marks an admitted call that waited for its rate slot as going out now,
-- before its request is sent: a call still reserved that waited and has no
-- mark was never made, and the tick that takes its lead over refunds it
-- instead of settling it in doubt (enrich_doubt). Durable whatever the
-- server's synchronous_commit, like the admit: lost in a crash, the call
-- would look never made and its find could be bought again.
WITH started AS (
    UPDATE provider_calls
    SET started_at = now()
    WHERE id = sqlc.arg(call_id) AND state = 'reserved'
    RETURNING 1
)
SELECT (SELECT count(*) FROM started) AS started, set_config('synchronous_commit', 'on', true) AS durable;
