-- name: CreditsRecord :exec
-- Record a reading of an account's credits and free its claim. A failed
-- reading keeps the last credits known and says why (read_error); either
-- way the account is not read again before its next turn. read_at is when
-- the reading was taken (its claim's time, CreditsClaim), not when it
-- came back: calls billed meanwhile may be in it or not, never missed.
-- credits_at is the time of the credits figure: a failed reading keeps it.
UPDATE provider_credits
SET credits          = coalesce(sqlc.narg(credits), credits),
    reset_at         = CASE WHEN sqlc.narg(credits)::bigint IS NULL THEN reset_at ELSE sqlc.narg(reset_at) END,
    read_error       = sqlc.narg(read_error),
    read_at          = sqlc.arg(read_at)::timestamptz,
    credits_at       = CASE WHEN sqlc.narg(credits)::bigint IS NULL THEN credits_at ELSE sqlc.arg(read_at)::timestamptz END,
    refreshing_until = NULL,
    updated_at       = now()
WHERE account = sqlc.arg(account);
