-- name: EmailCampaignLock :exec
-- Serialises binding changes per campaign (enroll, rebinding after a pause)
-- with transaction advisory locks, taken in id order. Row locks on campaigns
-- would need UPDATE on campaigns, which the tick role does not have.
SELECT pg_advisory_xact_lock(7042005, id::int)
FROM unnest($1::bigint[]) AS id
ORDER BY id;
