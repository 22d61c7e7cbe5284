package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 30 (the two-cell simulation): ids are bigint, and a cell starts
// its ids high so a workspace can move between cells with its ids. The
// binding lock cast a campaign's id to int: enroll failed with "integer
// out of range" for any campaign id past 2^31.
func TestLockCampaignsTakesBigIDs(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		return store.LockCampaigns(ctx, tx, []int64{7, 3_000_000_000, 2_000_000_000_007})
	})
	if err != nil {
		t.Fatal(err)
	}
}
