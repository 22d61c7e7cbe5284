package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// OpenBreakers counts breakers refusing calls, per provider (every
// provider with a breaker row appears, with 0 when none is open).
func OpenBreakers(ctx context.Context, db DBTX) (map[string]int, error) {
	rows, err := sqlcdb.New(db).GuardMetricsBreakers(ctx)
	if err != nil {
		return nil, fmt.Errorf("count open breakers: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Provider] = int(r.Count)
	}
	return out, nil
}

// MonthSpend is each workspace's spend this UTC month, by name.
func MonthSpend(ctx context.Context, db DBTX) (map[string]float64, error) {
	rows, err := sqlcdb.New(db).GuardMetricsSpend(ctx)
	if err != nil {
		return nil, fmt.Errorf("read spend: %w", err)
	}
	out := map[string]float64{}
	for _, r := range rows {
		out[r.Name] = r.SpentUsd
	}
	return out, nil
}

// LastTickSuccess is when a tick of kind last finished with exit status 0
// on any host (nil when never).
func LastTickSuccess(ctx context.Context, db DBTX, kind string) (*time.Time, error) {
	t, err := sqlcdb.New(db).GuardMetricsLastSuccess(ctx, kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read last %s tick: %w", kind, err)
	}
	return t, nil
}
