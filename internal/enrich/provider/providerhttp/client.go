package providerhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
)

// Client sends requests to one provider. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client
}

// Response is a provider answer whose body has been read within the limit.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// errOffHostRedirect marks a redirect the client refused to follow: the key
// travels in headers or the query string and must never reach another host.
var errOffHostRedirect = errors.New("redirect to another host refused")

// New returns a client for cfg, filling defaults.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = TimeoutDefault
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = MaxBodyDefault
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = MaxRetriesDefault
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = MaxRetryWaitDefault
	}
	if cfg.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// A tick runs ~25 calls at once against one host; keep those
		// connections instead of redialling.
		t.MaxIdleConnsPerHost = 64
		cfg.Transport = t
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{
		cfg: cfg,
		http: &http.Client{
			Transport: cfg.Transport,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme || len(via) >= 3 {
					return errOffHostRedirect
				}
				return nil
			},
		},
	}
}

// Provider is the provider name this client speaks to.
func (c *Client) Provider() string { return c.cfg.Provider }

// ConfigError reports an unset API key: this host cannot call the provider,
// which is its own configuration problem, not the provider's.
func (c *Client) ConfigError() error {
	if c.cfg.APIKey == "" {
		return fmt.Errorf("%s is not set (set it, or leave %s out)", KeyEnv(c.cfg.Provider), c.cfg.Provider)
	}
	return nil
}

// APIKey is the configured key; adapters put it on requests and nowhere else.
func (c *Client) APIKey() string { return c.cfg.APIKey }

// URL joins the base URL with an adapter's path and query.
func (c *Client) URL(path string, query url.Values) string {
	u := *c.cfg.BaseURL
	u.Path = path
	u.RawQuery = query.Encode()
	return u.String()
}

// attempt sends one request under the per-call timeout and reads the body
// within the limit. Every failure comes back as a *enrich.ProviderError.
func (c *Client) attempt(ctx context.Context, newRequest func(context.Context) (*http.Request, error)) (*Response, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := newRequest(actx)
	if err != nil {
		return nil, c.Error(enrich.KindAuth, nil, "cannot build request; check "+BaseURLEnv(c.cfg.Provider), err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBody+1))
	if err != nil {
		pe := c.transportError(ctx, err)
		if pe.Kind == enrich.KindCancelled {
			return nil, pe
		}
		pe.Status = resp.StatusCode
		pe.Message = "reading response body: " + pe.Message
		return nil, pe
	}
	if int64(len(body)) > c.cfg.MaxBody {
		return nil, c.Error(enrich.KindUnavailable, &Response{Status: resp.StatusCode},
			fmt.Sprintf("response body larger than %d bytes", c.cfg.MaxBody), nil)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// transportError classifies a failure before a full answer arrived: ctx is
// the caller's (the tick's) context, so its end is the tick cutting the
// call, while the per-attempt timeout firing with ctx alive is the
// provider's slowness. It never uses *url.Error's text, which carries the
// request URL and so, for Hunter and MillionVerifier, the key.
func (c *Client) transportError(ctx context.Context, err error) *enrich.ProviderError {
	cause := err
	var uerr *url.Error
	if errors.As(err, &uerr) {
		cause = uerr.Err
	}
	switch {
	case errors.Is(err, errOffHostRedirect):
		return c.Error(enrich.KindAuth, nil, "provider redirected to another host; refused to follow with the key, check "+BaseURLEnv(c.cfg.Provider), errOffHostRedirect)
	case ctx.Err() != nil:
		return enrich.CancelledByTick(ctx, c.cfg.Provider)
	case errors.Is(err, context.DeadlineExceeded):
		return c.Error(enrich.KindUnavailable, nil, fmt.Sprintf("no answer within %s", c.cfg.Timeout), context.DeadlineExceeded)
	}
	return c.Error(enrich.KindUnavailable, nil, "request failed: "+c.Text(cause.Error()), redacted{msg: c.redact(cause.Error()), err: cause})
}
