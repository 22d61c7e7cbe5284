package demo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Round is what the two ticks of one round did.
type Round struct {
	N int `json:"round"`
	// FindymailExhausted: Findymail had answered "out of credits" by the
	// end of this round.
	FindymailExhausted bool                `json:"findymail_exhausted"`
	EmailsSent         int                 `json:"emails_sent"`
	Enrich             enrich.Report       `json:"enrich_tick"`
	Email              sequence.TickReport `json:"email_tick"`
}

// tickArgs are the two command lines of a round. The ticks run with
// production flags except their durations, scaled to the demo's cadence.
func (c Config) tickArgs() (enrichArgs, emailArgs []string) {
	emailBudget, _, enrichBudget := c.budgets()
	enrichArgs = append(tickkind.Enrich.Args(), "--providers", "findymail,hunter",
		"--max-duration", enrichBudget.String(), "--output", "json", "--log-level", "warn")
	emailArgs = append(tickkind.Email.Args(), "--concurrency", strconv.Itoa(c.Mailboxes),
		"--max-duration", emailBudget.String(), "--output", "json", "--log-level", "warn")
	return enrichArgs, emailArgs
}

// runRound starts `enrich tick` and `email tick` as two processes at the
// same moment and waits for both.
func runRound(ctx context.Context, r *runner, cfg Config, n int) (Round, error) {
	round := Round{N: n}
	enrichArgs, emailArgs := cfg.tickArgs()
	var g errgroup.Group
	g.Go(func() error {
		return r.runJSON(ctx, fmt.Sprintf("round%02d-enrich", n), &round.Enrich, enrichArgs...)
	})
	g.Go(func() error {
		return r.runJSON(ctx, fmt.Sprintf("round%02d-email", n), &round.Email, emailArgs...)
	})
	if err := g.Wait(); err != nil {
		return round, err
	}
	round.EmailsSent = round.Email.Sent
	return round, nil
}

// cadence waits until start + n*interval, or returns at once when the
// round overran its slot.
func cadence(ctx context.Context, start time.Time, n int, interval time.Duration) error {
	return tick.Sleep(ctx, time.Until(start.Add(time.Duration(n)*interval)))
}
