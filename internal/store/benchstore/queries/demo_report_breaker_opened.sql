-- name: DemoReportBreakerOpened :one
-- When findymail's breaker first opened: the first breaker_opened (or
-- quota_exhausted) event is written in the transaction that opened it.
-- No row: it never opened.
SELECT created_at
FROM events
WHERE provider = 'findymail' AND kind IN ('breaker_opened', 'quota_exhausted')
ORDER BY created_at
LIMIT 1;
