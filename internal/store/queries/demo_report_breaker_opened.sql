-- name: DemoReportBreakerOpened :one
-- When findymail's breaker first opened: the first breaker_opened (or
-- quota_exhausted) event is written in the transaction that opened it.
SELECT min(created_at)::timestamptz AS opened
FROM events
WHERE provider = 'findymail' AND kind IN ('breaker_opened', 'quota_exhausted');
