-- name: BenchStepsDue :exec
-- Makes every enrolled step due an hour ago.
UPDATE enrollments SET next_send_at = now() - interval '1 hour';
