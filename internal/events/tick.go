package events

import (
	"context"
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
	ran, err := tick.Run(ctx, pool, tick.Spec{Kind: tickkind.Events, ID: opts.TickID}, func(ctx context.Context, started time.Time) tick.Outcome {
		var err error
		rep.DeliveryReport, err = DeliverEvents(ctx, pool, opts.WebhookURL,
			DeliverOptions{StopClaimingAt: started.Add(opts.MaxDuration), Metrics: opts.Metrics})
		return tick.Outcome{Claimed: rep.Delivered + rep.Failed + rep.Lost, Counts: rep.Counts(), Err: err}
	})
	if !ran && err != nil {
		return nil, err // no start recorded: nothing to report
	}
	return rep, err
}
