-- name: TickStart :one
-- Records a tick's start; finished_at stays NULL until tick_finish, so a
-- crashed tick shows as one that never finished.
INSERT INTO tick_runs (kind, tick_id, host, pid) VALUES (sqlc.arg(kind), sqlc.arg(tick_id), sqlc.arg(host), sqlc.arg(pid)) RETURNING started_at;
