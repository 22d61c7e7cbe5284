-- name: TickStart :one
-- Records a tick's start; finished_at stays NULL until tick_finish, so a
-- crashed tick shows as one that never finished.
INSERT INTO tick_runs (kind, tick_id, host, pid) VALUES ($1, $2, $3, $4) RETURNING started_at;
