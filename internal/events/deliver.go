// Package events delivers the outbox of domain events (breaker changes,
// ceilings, paused mailboxes) to a Slack incoming webhook: the `events
// deliver` tick and the delivery every tick runs at its end. Events are
// written by the statements that change state (guard, email tick); this
// package only reads, posts and marks them.
package events

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
)

// Delivery defaults.
const (
	// EventBatchDefault events are claimed per round trip.
	EventBatchDefault = 50
	// EventLeaseDefault must outlast one post (PostTimeoutDefault), so a
	// live deliverer never loses its claim to another.
	EventLeaseDefault  = time.Minute
	PostTimeoutDefault = 10 * time.Second
	// RetryBaseDefault doubles per failed attempt up to RetryMaxDefault.
	RetryBaseDefault = 30 * time.Second
	RetryMaxDefault  = time.Hour
)

// DeliverOptions tunes DeliverEvents; zero values take the defaults.
type DeliverOptions struct {
	Client  *http.Client
	Batch   int
	Lease   time.Duration
	Metrics *metrics.Metrics
	// StopClaimingAt bounds a run like any tick's --max-duration: no new
	// batch is claimed after it; the zero time means no bound.
	StopClaimingAt time.Time
}

// DeliveryReport is what one DeliverEvents run did.
type DeliveryReport struct {
	// NoWebhook: no webhook is configured; events stay pending.
	NoWebhook bool `json:"no_webhook"`
	Delivered int  `json:"delivered"`
	Failed    int  `json:"failed"`
	// Lost counts posts whose claim had run out before they were marked;
	// their lease holder decides (this never happens within the lease).
	Lost int `json:"lost"`
}

// DeliverEvents posts every due undelivered event to the Slack webhook
// once and marks it delivered. Events are claimed with FOR UPDATE SKIP
// LOCKED and a lease, so concurrent deliverers (ticks on several hosts)
// never post the same event; a failed post is retried by a later run with
// exponential backoff (or the webhook's Retry-After). With no webhook it
// does nothing: events wait, listed by `rindactl events list`.
func DeliverEvents(ctx context.Context, db store.DBTX, webhookURL string, opts DeliverOptions) (DeliveryReport, error) {
	var rep DeliveryReport
	if webhookURL == "" {
		rep.NoWebhook = true
		return rep, nil
	}
	// The URL is the credential: hidden from logs and stored text, whole
	// or as its path.
	redact.Register(webhookURL)
	if u, err := url.Parse(webhookURL); err == nil {
		redact.Register(u.Path)
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: PostTimeoutDefault}
	}
	if opts.Batch <= 0 {
		opts.Batch = EventBatchDefault
	}
	if opts.Lease <= 0 {
		opts.Lease = EventLeaseDefault
	}
	for {
		claimed, err := store.ClaimEvents(ctx, db, opts.Batch, opts.Lease)
		if err != nil {
			return rep, err
		}
		for _, ev := range claimed {
			if err := deliver(ctx, db, opts, webhookURL, ev, &rep); err != nil {
				return rep, err
			}
		}
		if len(claimed) < opts.Batch || ctx.Err() != nil {
			return rep, ctx.Err()
		}
		if !opts.StopClaimingAt.IsZero() && !time.Now().Before(opts.StopClaimingAt) {
			return rep, nil
		}
	}
}

func deliver(ctx context.Context, db store.DBTX, opts DeliverOptions, webhookURL string, ev store.ClaimedEvent, rep *DeliveryReport) error {
	e := eventFromPayload(ev.Kind, ev.Provider, ev.Payload, ev.CreatedAt)
	body, err := e.slackMessage()
	if err != nil {
		return err
	}
	postErr := postSlack(ctx, opts.Client, webhookURL, body)
	// Record the outcome even when the run is being cancelled: a post that
	// went out must be marked, or it would be posted again.
	mctx := context.WithoutCancel(ctx)
	if postErr == nil {
		ok, err := store.MarkEventDelivered(mctx, db, ev.ID, ev.LockedUntil)
		if err != nil {
			return err
		}
		if !ok {
			rep.Lost++
			return nil
		}
		rep.Delivered++
		opts.Metrics.EventDelivered(ev.Kind, "delivered")
		return nil
	}
	rep.Failed++
	opts.Metrics.EventDelivered(ev.Kind, "failed")
	retry := retryDelay(ev.Attempts)
	var werr *webhookError
	if errors.As(postErr, &werr) && werr.RetryAfter > retry {
		retry = werr.RetryAfter
	}
	return store.MarkEventFailed(mctx, db, store.EventFailure{ID: ev.ID, Lease: ev.LockedUntil, RetryIn: retry, Reason: postErr.Error()})
}

// retryDelay is RetryBaseDefault doubled per earlier attempt, capped.
func retryDelay(attempts int) time.Duration {
	return tick.Backoff(attempts+1, RetryBaseDefault, RetryMaxDefault)
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
