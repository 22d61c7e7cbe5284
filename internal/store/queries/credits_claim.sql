-- name: CreditsClaim :many
-- Claim the reading of an account's credits: it is due when never read or
-- read more than every ago, and nobody else is reading it now. Whoever
-- gets the row back reads the provider's account endpoint; everyone else
-- uses the shared reading. Zero rows: not due, or taken. claimed_at is
-- the database's time of the claim, right before the reading: the time the
-- reading is recorded at, so the ledger's calls billed after it are the
-- ones it does not count.
INSERT INTO provider_credits AS p (account, provider, workspace_id, refreshing_until)
VALUES (sqlc.arg(account), sqlc.arg(provider), sqlc.narg(workspace_id), now() + sqlc.arg(lease)::interval)
ON CONFLICT (account) DO UPDATE SET refreshing_until = excluded.refreshing_until, updated_at = now()
WHERE (p.read_at IS NULL OR p.read_at <= now() - sqlc.arg(every)::interval)
  AND (p.refreshing_until IS NULL OR p.refreshing_until < now())
RETURNING p.account, now()::timestamptz AS claimed_at;
