// Package providerhttp is the HTTP plumbing every provider adapter shares:
// configuration from the environment, a client with a per-call timeout and a
// body limit that refuses off-host redirects, the mapping of transport
// failures to enrich domain errors, and a bounded in-call retry for short
// Retry-After answers. Adapters only build requests and parse answers.
package providerhttp

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/redact"
)

const (
	// TimeoutDefault bounds one HTTP attempt, body included. MillionVerifier
	// is asked to give up on slow mail servers after 10 s, so this leaves room
	// for that plus the network.
	TimeoutDefault = 20 * time.Second
	// MaxBodyDefault is the most a provider answer may weigh; a larger body is
	// a hostile or broken provider, classified unavailable instead of read.
	MaxBodyDefault int64 = 1 << 20
	// MaxRetriesDefault is how many times one call retries a short
	// Retry-After before the domain error goes up to the tick.
	MaxRetriesDefault = 2
	// MaxRetryWaitDefault is the longest Retry-After honoured inside a call;
	// longer waits are the tick's job (it reschedules the lead).
	MaxRetryWaitDefault = 3 * time.Second
)

// Config describes one provider endpoint. Zero durations and sizes take the
// ...Default constants; MaxRetries < 0 disables the in-call retry.
type Config struct {
	// Provider is the lower-case provider name ("hunter"); it names errors,
	// log lines and the environment variables.
	Provider string
	// APIKey may be empty: every call then fails with enrich.KindAuth and no
	// request is sent, so a tick can skip the provider and alert.
	APIKey       string
	BaseURL      *url.URL
	Timeout      time.Duration
	MaxBody      int64
	MaxRetries   int
	MaxRetryWait time.Duration
	// Transport defaults to a clone of http.DefaultTransport sized for a
	// tick's concurrency.
	Transport http.RoundTripper
	// Logger receives one warn line per deliberate block (retry, lifted
	// domain error). Nil discards.
	Logger *slog.Logger
	// Now is the clock used for HTTP-date Retry-After values; nil is time.Now.
	Now func() time.Time
}

// KeyEnv, BaseURLEnv and TimeoutEnv name the environment variables for a
// provider.
func KeyEnv(provider string) string     { return envPrefix(provider) + "_API_KEY" }
func BaseURLEnv(provider string) string { return envPrefix(provider) + "_BASE_URL" }
func TimeoutEnv(provider string) string { return envPrefix(provider) + "_TIMEOUT" }

// maxTimeout bounds RINDA_<PROVIDER>_TIMEOUT: a longer wait for one answer
// would hold a tick's lead past any sensible lease.
const maxTimeout = 5 * time.Minute

// TimeoutFromEnv reads RINDA_<PROVIDER>_TIMEOUT, the bound of one HTTP
// attempt; unset is TimeoutDefault. A tick cuts any call at its deadline
// plus this, so its lease must exceed --max-duration plus this.
func TimeoutFromEnv(provider string, getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv(TimeoutEnv(provider)))
	if v == "" {
		return TimeoutDefault, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > maxTimeout {
		return 0, fmt.Errorf("invalid %s %q: use a positive duration up to %s, e.g. 20s", TimeoutEnv(provider), v, maxTimeout)
	}
	return d, nil
}

func envPrefix(provider string) string { return "RINDA_" + strings.ToUpper(provider) }

// ConfigFromEnv reads RINDA_<PROVIDER>_API_KEY, RINDA_<PROVIDER>_BASE_URL
// and RINDA_<PROVIDER>_TIMEOUT through getenv (os.Getenv in production, a map in tests). The base URL
// falls back to defaultBaseURL. A missing key is not an error here: see
// Config.APIKey.
func ConfigFromEnv(provider, defaultBaseURL string, getenv func(string) string) (Config, error) {
	raw := strings.TrimSpace(getenv(BaseURLEnv(provider)))
	if raw == "" {
		raw = defaultBaseURL
	}
	base, err := ParseBaseURL(BaseURLEnv(provider), raw)
	if err != nil {
		return Config{}, err
	}
	timeout, err := TimeoutFromEnv(provider, getenv)
	if err != nil {
		return Config{}, err
	}
	key := strings.TrimSpace(getenv(KeyEnv(provider)))
	redact.Register(key) // hidden from every log line and stored text
	return Config{
		Provider: provider,
		APIKey:   key,
		BaseURL:  base,
		Timeout:  timeout,
	}, nil
}

// ParseBaseURL accepts scheme and host only (http or https, optional port):
// the adapters own the paths, and anything else in the value is a mistake.
// Errors show only its scheme and host: a key pasted into the user info,
// the path or the query (Hunter takes ?api_key=) is never echoed.
func ParseBaseURL(envName, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not a URL; set it to scheme and host only, e.g. https://api.example.com", envName)
	}
	shown := u.Scheme + "://" + u.Host
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s=%q must start with http:// or https://", envName, shown)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("%s=%q has no host; set it to scheme and host only, e.g. https://api.example.com", envName, shown)
	case u.User != nil:
		return nil, fmt.Errorf("%s=%q must not carry credentials; put the key in %s", envName, shown,
			strings.TrimSuffix(envName, "_BASE_URL")+"_API_KEY")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return nil, fmt.Errorf("%s=%q must be scheme and host only (no path, query or fragment)", envName, shown)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}
