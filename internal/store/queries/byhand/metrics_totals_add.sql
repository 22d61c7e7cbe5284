-- Adds one run's counts to the running totals: @metrics metric names, @labels their
-- label values as JSON objects, @deltas the counts, in one order every tick
-- uses (sorted by metric and labels), so two ticks adding to the same
-- series take their row locks in the same order and never deadlock.
INSERT INTO metric_totals (metric, labels, value)
SELECT u.metric, u.labels::jsonb, u.delta
FROM unnest(@metrics::text[], @labels::text[], @deltas::bigint[]) AS u (metric, labels, delta)
ON CONFLICT (metric, labels) DO UPDATE
SET value = metric_totals.value + EXCLUDED.value, updated_at = now();
