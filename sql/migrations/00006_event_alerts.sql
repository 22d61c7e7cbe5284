-- One Slack message per workspace x provider breaker episode (issue 14). An
-- episode writes several events (quota_exhausted and breaker_opened, later
-- breaker_closed); all stay in the outbox for `events list`, but only the
-- episode's alert is posted. ceiling_reached and the mailbox events stay
-- alerts, as before.

-- +goose Up
ALTER TABLE events ADD COLUMN alert boolean NOT NULL DEFAULT true;
-- Undelivered companions of an episode that has its own alert event.
UPDATE events e SET alert = false
WHERE e.delivered_at IS NULL
  AND (e.kind = 'breaker_closed'
       OR e.kind = 'breaker_opened' AND EXISTS (
           SELECT 1 FROM events a
           WHERE a.kind IN ('quota_exhausted', 'provider_auth_failed')
             AND a.workspace_id = e.workspace_id AND a.provider = e.provider
             AND a.payload->>'episode' = e.payload->>'episode'));
DROP INDEX events_undelivered_idx;
CREATE INDEX events_alert_due_idx ON events (next_attempt_at) WHERE delivered_at IS NULL AND alert;

-- +goose Down
DROP INDEX events_alert_due_idx;
CREATE INDEX events_undelivered_idx ON events (next_attempt_at) WHERE delivered_at IS NULL;
ALTER TABLE events DROP COLUMN alert;
