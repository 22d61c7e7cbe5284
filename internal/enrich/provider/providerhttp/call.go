package providerhttp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/tick"
)

// Op is one logical provider call: how to build its request and how to read
// its answer. Parse reads the answer with the calling client (whose error
// builders classify it) and returns either a result or a
// *enrich.ProviderError.
type Op[T any] struct {
	NewRequest func(ctx context.Context) (*http.Request, error)
	Parse      func(*Client, *Response) (T, error)
	// Endpoint is the request's path, for log lines (never the query,
	// which may carry the key).
	Endpoint string
	// LogAttrs identify the call in log lines (lead_id, workspace_id).
	LogAttrs []slog.Attr
}

// Do runs op: it refuses at once without a key, then tries up to
// 1+MaxRetries times, sleeping in between only for a transient answer whose
// Retry-After is at most MaxRetryWait, and lifts the last domain error. It
// returns a *enrich.ProviderError and never a bare error.
func Do[T any](ctx context.Context, c *Client, op Op[T]) (T, error) {
	var zero T
	if c.cfg.APIKey == "" {
		return zero, c.Error(enrich.KindAuth, nil, KeyEnv(c.cfg.Provider)+" is not set", nil)
	}
	start := time.Now()
	for attempt := 0; ; attempt++ {
		out, err := once(ctx, c, op)
		if err == nil {
			return out, nil
		}
		pe, ok := enrich.AsProviderError(err)
		if !ok { // an adapter bug; still never hand the tick a bare error
			pe = c.Error(enrich.KindUnavailable, nil, "unclassified failure", err)
		}
		if attempt < c.cfg.MaxRetries && pe.Transient() && pe.RetryAfter > 0 && pe.RetryAfter <= c.cfg.MaxRetryWait {
			c.log(ctx, "provider asked for a short wait; retrying inside the call", pe, start, op.Endpoint, op.LogAttrs, slog.Int("attempt", attempt+1))
			if tick.Sleep(ctx, pe.RetryAfter) == nil {
				continue
			}
			// The tick ended the wait: the retry was due, so the call is
			// the tick's cut, not the provider's failure.
			pe = enrich.CancelledByTick(ctx, c.cfg.Provider)
		}
		c.log(ctx, answerMessage[pe.Kind], pe, start, op.Endpoint, op.LogAttrs)
		return zero, pe
	}
}

// answerMessage is the adapter's log line for a call that ended in an
// error of each kind: what the provider said (not "blocked" for a 402),
// or that the tick cut the call.
var answerMessage = map[enrich.ErrorKind]string{
	enrich.KindQuota:       "provider answered: quota exhausted",
	enrich.KindRateLimited: "provider answered: throttled",
	enrich.KindAuth:        "provider refused the key or the endpoint",
	enrich.KindInvalidLead: "provider rejected the lead's input",
	enrich.KindUnavailable: "provider call failed",
	enrich.KindCancelled:   "call cancelled by the tick",
}

// once is a single attempt: send, then parse.
func once[T any](ctx context.Context, c *Client, op Op[T]) (T, error) {
	resp, err := c.attempt(ctx, op.NewRequest)
	if err != nil {
		var zero T
		return zero, err
	}
	return op.Parse(c, resp)
}

// log writes the first link of the log chain (adapter, waterfall, tick).
func (c *Client) log(ctx context.Context, msg string, pe *enrich.ProviderError, start time.Time, endpoint string, attrs []slog.Attr, extra ...slog.Attr) {
	level := slog.LevelWarn
	if pe.Kind == enrich.KindCancelled {
		// The tick stopping is no provider trouble: nothing to act on.
		level = slog.LevelInfo
		extra = append(extra, slog.String("cause", pe.Err.Error()))
	}
	all := append([]slog.Attr{
		slog.String("component", "adapter"),
		slog.String("provider", c.cfg.Provider),
		slog.String("endpoint", endpoint),
		slog.String("kind", string(pe.Kind)),
		slog.Int("status", pe.Status),
		slog.Int64("retry_after_ms", pe.RetryAfter.Milliseconds()),
		slog.Int("max_retries", c.cfg.MaxRetries),
		slog.Bool("is_transient", pe.Transient()),
		slog.Int64("duration_ms", time.Since(start).Milliseconds()),
		slog.String("error", pe.Error()),
	}, attrs...)
	c.cfg.Logger.LogAttrs(ctx, level, msg, append(all, extra...)...)
}
