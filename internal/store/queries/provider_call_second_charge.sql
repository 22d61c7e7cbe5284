-- name: ProviderCallSecondCharge :exec
-- Mark an admitted call as a possible second charge: it asks a finder again
-- for a lead whose earlier answer from it was lost (in doubt), so the
-- provider may bill the same find twice. Marked before the call goes out.
UPDATE provider_calls SET second_charge = true WHERE id = sqlc.arg(id);
