package store

import (
	"context"
	"fmt"
	"time"
)

// OpenBreakers counts breakers refusing calls, per provider (every
// provider with a breaker row appears, with 0 when none is open).
func OpenBreakers(ctx context.Context, db DBTX) (map[string]int, error) {
	rows, err := db.Query(ctx, query("guard_metrics_breakers"))
	if err != nil {
		return nil, fmt.Errorf("count open breakers: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var p string
		var n int
		if err := rows.Scan(&p, &n); err != nil {
			return nil, err
		}
		out[p] = n
	}
	return out, rows.Err()
}

// MonthSpend is each workspace's spend this UTC month, by name.
func MonthSpend(ctx context.Context, db DBTX) (map[string]float64, error) {
	rows, err := db.Query(ctx, query("guard_metrics_spend"))
	if err != nil {
		return nil, fmt.Errorf("read spend: %w", err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var name string
		var usd float64
		if err := rows.Scan(&name, &usd); err != nil {
			return nil, err
		}
		out[name] = usd
	}
	return out, rows.Err()
}

// LastTickSuccess is when a tick of kind last finished with exit status 0
// on any host (nil when never).
func LastTickSuccess(ctx context.Context, db DBTX, kind string) (*time.Time, error) {
	var t *time.Time
	if err := db.QueryRow(ctx, query("guard_metrics_last_success"), kind).Scan(&t); err != nil {
		return nil, fmt.Errorf("read last %s tick: %w", kind, err)
	}
	return t, nil
}
