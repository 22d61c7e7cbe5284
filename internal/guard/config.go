// Package guard keeps enrichment's provider guards in Postgres: a circuit
// breaker per (workspace, provider), a GCRA token bucket per provider and a
// monthly USD ceiling per workspace. Breaker changes write their outbox
// events (package events delivers them); the counters go to package
// metrics. A cron tick remembers nothing and several hosts may tick at
// once, so every decision is one atomic SQL statement over shared rows.
package guard

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/tick"
)

// Breaker and bucket defaults (docs/guards.md explains each).
const (
	// QuotaOpenDefault is the shortest a quota answer opens a breaker for;
	// a longer Retry-After or a known reset time wins.
	QuotaOpenDefault = 5 * time.Minute
	// FailureThresholdDefault consecutive transient failures open a breaker
	// for TransientOpenDefault.
	FailureThresholdDefault = 5
	TransientOpenDefault    = time.Minute
	// AuthOpenDefault: a rejected key will not fix itself within a tick;
	// stop calling and alert, but look again soon after an operator acts.
	AuthOpenDefault = 15 * time.Minute
	// ProbeLeaseDefault is how long a half-open probe is reserved for its
	// caller; a crashed prober frees it after this.
	ProbeLeaseDefault = time.Minute
	// MaxTokenWaitDefault is the longest Admit sleeps for a token when the
	// caller names no deadline (enrich.Call.WaitUntil; ticks always do);
	// beyond it the call is refused with a due time.
	MaxTokenWaitDefault = time.Second
	// maxOpen bounds a breaker window computed from provider input.
	maxOpen = 32 * 24 * time.Hour
)

// Config is every guard setting. Zero durations and counts take the
// defaults above.
type Config struct {
	// Providers holds per-provider limits; a provider missing here has no
	// bucket and no price.
	Providers        map[string]providerspec.Limits
	QuotaOpen        time.Duration
	TransientOpen    time.Duration
	AuthOpen         time.Duration
	FailureThreshold int
	ProbeLease       time.Duration
	MaxTokenWait     time.Duration
}

func (c Config) withDefaults() Config {
	tick.Defaults(&c, Config{
		QuotaOpen: QuotaOpenDefault, TransientOpen: TransientOpenDefault, AuthOpen: AuthOpenDefault,
		FailureThreshold: FailureThresholdDefault, ProbeLease: ProbeLeaseDefault, MaxTokenWait: MaxTokenWaitDefault,
	})
	return c
}

// Limits returns the limits for provider.
func (c Config) Limits(provider string) providerspec.Limits { return c.Providers[provider] }

// ConfigFromEnv reads the guard settings from the environment (getenv is
// os.Getenv in production) over defaults, the limits of the tick's
// providers by name (provider.DefaultLimits: each adapter's descriptor);
// the guard knows no provider of its own:
//
//	RINDA_<PROVIDER>_RATE         20/s, 500/m, 1000/h, or off
//	RINDA_<PROVIDER>_BURST        tokens available at once
//	RINDA_<PROVIDER>_RATE_SCOPE   provider (one bucket shared by all
//	                              workspaces) or workspace
//	RINDA_<PROVIDER>_COST_USD     price of one billed call
//	RINDA_<PROVIDER>_BILL_MISSES  true when a call without a result is billed
//	RINDA_BREAKER_QUOTA_OPEN, RINDA_BREAKER_TRANSIENT_OPEN (durations),
//	RINDA_BREAKER_FAILURES (count)
func ConfigFromEnv(getenv func(string) string, defaults map[string]providerspec.Limits) (Config, error) {
	cfg := Config{Providers: map[string]providerspec.Limits{}}
	for _, p := range slices.Sorted(maps.Keys(defaults)) { // the first bad variable, always the same
		l, err := limitsFromEnv(getenv, p, defaults[p])
		if err != nil {
			return Config{}, err
		}
		cfg.Providers[p] = l
	}
	var err error
	if cfg.QuotaOpen, err = envDuration(getenv, "RINDA_BREAKER_QUOTA_OPEN"); err != nil {
		return Config{}, err
	}
	if cfg.TransientOpen, err = envDuration(getenv, "RINDA_BREAKER_TRANSIENT_OPEN"); err != nil {
		return Config{}, err
	}
	if v := getenv("RINDA_BREAKER_FAILURES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Config{}, fmt.Errorf("invalid RINDA_BREAKER_FAILURES %q: use a whole number of at least 1", v)
		}
		cfg.FailureThreshold = n
	}
	return cfg.withDefaults(), nil
}

func limitsFromEnv(getenv func(string) string, provider string, l providerspec.Limits) (providerspec.Limits, error) {
	prefix := "RINDA_" + strings.ToUpper(provider) + "_"
	if v := getenv(prefix + "RATE"); v != "" {
		r, err := providerspec.ParseRate(v)
		if err != nil {
			return l, fmt.Errorf("invalid %sRATE %q: %w", prefix, v, err)
		}
		l.Rate = r
	}
	if v := getenv(prefix + "BURST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return l, fmt.Errorf("invalid %sBURST %q: use a whole number of at least 1", prefix, v)
		}
		l.Burst = n
	}
	switch v := getenv(prefix + "RATE_SCOPE"); v {
	case "", "provider":
	case "workspace":
		l.PerWorkspace = true
	default:
		return l, fmt.Errorf("invalid %sRATE_SCOPE %q: use provider or workspace", prefix, v)
	}
	if v := getenv(prefix + "COST_USD"); v != "" {
		c, err := strconv.ParseFloat(v, 64)
		if err != nil || c < 0 || c > 1000 {
			return l, fmt.Errorf("invalid %sCOST_USD %q: use a price in dollars, e.g. 0.049", prefix, v)
		}
		l.CostUSD = c
	}
	if v := getenv(prefix + "BILL_MISSES"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return l, fmt.Errorf("invalid %sBILL_MISSES %q: use true or false", prefix, v)
		}
		l.BillMisses = b
	}
	return l, nil
}

func envDuration(getenv func(string) string, name string) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid %s %q: use a duration such as 5m or 90s", name, v)
	}
	return d, nil
}
