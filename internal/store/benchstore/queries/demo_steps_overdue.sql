-- name: DemoStepsOverdue :exec
-- Makes every active enrollment's next step two hours overdue, so the demo's
-- first email tick has a backlog.
UPDATE enrollments SET next_send_at = now() - interval '2 hours' WHERE status = 'active';
