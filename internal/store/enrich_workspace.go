package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// ErrUnknownWorkspace is returned for a workspace name that does not exist.
var ErrUnknownWorkspace = errors.New("unknown workspace")

// EnrichWorkspaceID resolves a workspace name for `enrich tick --workspace`.
func EnrichWorkspaceID(ctx context.Context, db DBTX, name string) (int64, error) {
	id, err := sqlcdb.New(db).EnrichWorkspaceId(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("%w %q (list them with 'rindactl workspace list')", ErrUnknownWorkspace, name)
	}
	if err != nil {
		return 0, fmt.Errorf("looking up workspace %q: %w", name, err)
	}
	return id, nil
}
