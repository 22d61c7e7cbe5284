package suppression

import (
	"context"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// Export writes the workspace's suppression list to w as CSV (Columns),
// oldest first, from one snapshot: what Import reads back. A forgotten
// person's row has an empty email and only email_sha256. It returns the
// rows written.
func Export(ctx context.Context, pool *pgxpool.Pool, workspace string, w io.Writer) (int64, error) {
	cw := csv.NewWriter(w)
	var n int64
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		wsID, err := store.WorkspaceID(ctx, tx, workspace)
		if err != nil {
			return err
		}
		if err := cw.Write(Columns); err != nil {
			return err
		}
		return store.EachSuppression(ctx, tx, wsID, func(r store.Suppression) error {
			n++
			return cw.Write(exportRecord(r.Email, r.SHA256, r.Reason, r.CreatedAt))
		})
	})
	if err == nil {
		cw.Flush()
		err = cw.Error()
	}
	if err != nil {
		return n, fmt.Errorf("exporting the suppressions of %s: %w", workspace, err)
	}
	return n, nil
}

// exportRecord is one suppression as an export line (Columns), which
// NewReader reads back as the same Entry. An address that starts with a
// formula character ("=1+2@evil.test" is one) is written neutralised.
func exportRecord(email string, sha []byte, reason string, created time.Time) []string {
	rec := []string{email, hex.EncodeToString(sha), reason, created.UTC().Format(time.RFC3339Nano)}
	for i := range rec {
		rec[i] = neutralise(rec[i])
	}
	return rec
}
