-- name: BenchSentCount :one
-- Steps recorded sent, and those whose delivery is unknown.
SELECT count(*) FILTER (WHERE status = 'sent') AS sent, count(*) FILTER (WHERE status = 'delivery_unknown') AS unknown
FROM sends;
