package store

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// MetricTotal is one series of a running total: its metric, its label
// values by label name, and its value (a count).
type MetricTotal struct {
	Metric string
	Labels map[string]string
	Value  int64
}

//go:embed queries/byhand/metrics_totals_add.sql
var metricsTotalsAddSQL string

// metricsTotalsAddParams are metrics_totals_add.sql's parameters: a series
// (metric and its labels as JSON) and its delta at each index.
type metricsTotalsAddParams struct {
	Metrics []string `db:"metrics"`
	Labels  []string `db:"labels"`
	Deltas  []int64  `db:"deltas"`
}

var metricsTotalsAddStmt = byName[metricsTotalsAddParams](metricsTotalsAddSQL)

// AddMetricTotals adds each delta to its series' running total in one
// statement, in a fixed order (by metric, then labels) so concurrent
// ticks never deadlock on the rows. Zero deltas are left out.
func AddMetricTotals(ctx context.Context, db DBTX, deltas []MetricTotal) error {
	type row struct {
		metric, labels string
		delta          int64
	}
	rows := make([]row, 0, len(deltas))
	for _, d := range deltas {
		if d.Value == 0 {
			continue
		}
		labels, err := json.Marshal(d.Labels) // sorted keys: one text per label set
		if err != nil {
			return err
		}
		rows = append(rows, row{d.Metric, string(labels), d.Value})
	}
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(cmp.Compare(a.metric, b.metric), cmp.Compare(a.labels, b.labels)) })
	p := metricsTotalsAddParams{Metrics: make([]string, len(rows)), Labels: make([]string, len(rows)), Deltas: make([]int64, len(rows))}
	for i, r := range rows {
		p.Metrics[i], p.Labels[i], p.Deltas[i] = r.metric, r.labels, r.delta
	}
	if _, err := db.Exec(ctx, metricsTotalsAddStmt.sql, metricsTotalsAddStmt.args(p)...); err != nil {
		return fmt.Errorf("add metric totals: %w", err)
	}
	return nil
}

// MetricTotals reads the running totals of the named metrics.
func MetricTotals(ctx context.Context, db DBTX, metrics []string) ([]MetricTotal, error) {
	rows, err := sqlcdb.New(db).MetricsTotalsList(ctx, metrics)
	if err != nil {
		return nil, fmt.Errorf("read metric totals: %w", err)
	}
	out := make([]MetricTotal, len(rows))
	for i, r := range rows {
		out[i] = MetricTotal{Metric: r.Metric, Value: r.Value}
		if err := json.Unmarshal([]byte(r.Labels), &out[i].Labels); err != nil {
			return nil, fmt.Errorf("metric %s labels %s: %w", r.Metric, r.Labels, err)
		}
	}
	return out, nil
}
