package providerhttp

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"

	"github.com/rindactl/rindactl/internal/enrich"
)

// Adapter is what every provider adapter shares: one Client for its
// provider, and the Name and ConfigError methods of enrich.Configurable.
// Adapters embed it.
type Adapter struct {
	c *Client
}

var _ enrich.Configurable = Adapter{}

// NewAdapter returns the Adapter for provider with cfg (cfg.Provider is
// forced to provider).
func NewAdapter(provider string, cfg Config) Adapter {
	cfg.Provider = provider
	return Adapter{c: New(cfg)}
}

// FromEnv configures an adapter from RINDA_<PROVIDER>_API_KEY and
// RINDA_<PROVIDER>_BASE_URL (defaultBaseURL when unset) and builds it with
// newAdapter. Its log lines go to log (nil discards).
func FromEnv[A any](provider, defaultBaseURL string, getenv func(string) string, log *slog.Logger, newAdapter func(Config) A) (A, error) {
	cfg, err := ConfigFromEnv(provider, defaultBaseURL, getenv)
	if err != nil {
		var zero A
		return zero, err
	}
	cfg.Logger = log
	return newAdapter(cfg), nil
}

// Client is the adapter's client.
func (a Adapter) Client() *Client { return a.c }

// Name is the provider name.
func (a Adapter) Name() string { return a.c.Provider() }

// ConfigError reports an unset API key (enrich.Configurable).
func (a Adapter) ConfigError() error { return a.c.ConfigError() }

// GetJSON builds a GET of target asking for JSON, for Op.NewRequest.
func GetJSON(target string) func(context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err == nil {
			req.Header.Set("Accept", "application/json")
		}
		return req, err
	}
}

// Forbidden is a 403 that speaks of the key: an auth error naming its
// variable.
func (c *Client) Forbidden(resp *Response, msg string) *enrich.ProviderError {
	return c.Error(enrich.KindAuth, resp, cmp.Or(msg, "forbidden")+"; check "+KeyEnv(c.cfg.Provider), nil)
}

// Otherwise classifies an answer no adapter rule covers: an unreadable body
// below 500 (other than 401) is reported as unreadable, the rest as
// Unexpected.
func (c *Client) Otherwise(resp *Response, decodeErr *enrich.ProviderError, msg string) *enrich.ProviderError {
	if decodeErr != nil && resp.Status < 500 && resp.Status != http.StatusUnauthorized {
		return decodeErr
	}
	return c.Unexpected(resp, msg)
}
