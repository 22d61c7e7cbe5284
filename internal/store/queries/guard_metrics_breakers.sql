-- name: GuardMetricsBreakers :many
-- Breakers currently refusing calls, per provider.
SELECT provider, count(*) FILTER (WHERE state <> 'closed')
FROM breakers
GROUP BY provider;
