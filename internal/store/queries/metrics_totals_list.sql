-- name: MetricsTotalsList :many
-- The running totals of the named metrics, each series with its label
-- values as a JSON object.
SELECT metric, labels::text AS labels, value
FROM metric_totals
WHERE metric = ANY (sqlc.arg(metrics)::text[])
ORDER BY metric, labels;
