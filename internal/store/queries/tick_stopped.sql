-- name: TickStopped :exec
-- Records a tick stopped (SIGTERM) while it recorded its start: a clean
-- stop with nothing claimed. The cancelled start may have committed or
-- not, so this inserts the row or finishes the one that is there.
INSERT INTO tick_runs (kind, tick_id, host, pid, finished_at, exit_status)
VALUES (sqlc.arg(kind), sqlc.arg(tick_id), sqlc.arg(host), sqlc.arg(pid), now(), 0)
ON CONFLICT (tick_id) DO UPDATE SET finished_at = now(), exit_status = 0;
