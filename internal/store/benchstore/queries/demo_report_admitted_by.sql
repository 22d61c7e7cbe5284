-- name: DemoReportAdmittedBy :one
-- Findymail calls admitted by a time: the ledger row is written by the
-- admission, its created_at the admission's transaction start.
SELECT count(*)::int AS admitted
FROM provider_calls
WHERE provider = 'findymail' AND created_at <= sqlc.arg(at);
