-- name: EmailCampaignLock :exec
-- Serialises binding changes per campaign (enroll, rebinding after a pause)
-- with transaction advisory locks, taken in id order. Row locks on campaigns
-- would need UPDATE on campaigns, which the tick role does not have. The
-- lock's second key is an int, the id a bigint: hashint8 folds it (two
-- campaigns sharing a key only wait for each other).
SELECT pg_advisory_xact_lock(7042005, hashint8(id))
FROM unnest(sqlc.arg(campaign_ids)::bigint[]) AS id
ORDER BY id;
