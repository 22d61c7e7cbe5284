package events

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// TickMaxDurationDefault matches the other ticks: a run on the default
// every-minute schedule ends before the next firing.
const TickMaxDurationDefault = 50 * time.Second

// TickOptions tunes RunTick; zero values take the defaults.
type TickOptions struct {
	// WebhookURL is the Slack incoming webhook (SlackWebhookEnv); empty:
	// events stay pending.
	WebhookURL  string
	MaxDuration time.Duration
	Metrics     *metrics.Metrics
	TickID      string
}

// TickReport is what one `events deliver` tick did.
type TickReport struct {
	TickID string `json:"tick_id"`
	DeliveryReport
}

// Counts are the run's outcomes as tick_runs and the metrics count them.
func (r *TickReport) Counts() map[string]int {
	return map[string]int{"delivered": r.Delivered, "failed": r.Failed}
}

// RunTick is the events tick: DeliverEvents bounded by MaxDuration, with
// its run in tick_runs (kind events). Stopped by ctx (SIGTERM), it records
// what it posted and is not a failure: the rest waits for the next run.
func RunTick(ctx context.Context, pool *pgxpool.Pool, opts TickOptions) (*TickReport, error) {
	tick.Defaults(&opts, TickOptions{MaxDuration: TickMaxDurationDefault, TickID: tick.NewID()})
	rep := &TickReport{TickID: opts.TickID}
	run, err := tick.Start(ctx, pool, tickkind.Events, opts.TickID, 0)
	if errors.Is(err, tick.ErrStoppedBeforeStart) {
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	rep.DeliveryReport, err = DeliverEvents(ctx, pool, opts.WebhookURL,
		DeliverOptions{StopClaimingAt: run.Started.Add(opts.MaxDuration), Metrics: opts.Metrics})
	err = tick.CleanStop(err)
	res := tick.Result{Claimed: rep.Delivered + rep.Failed + rep.Lost, Counts: rep.Counts(), Err: err}
	if err != nil {
		res.ExitStatus = 1
	}
	if ferr := run.Finish(ctx, res); ferr != nil && err == nil {
		err = ferr
	}
	return rep, err
}
