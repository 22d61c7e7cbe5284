// Package credits watches the providers' credits before they run out: it
// reads each provider account's credits from the provider's free account
// endpoint at most once per RINDA_CREDITS_REFRESH, shared by every process
// through Postgres (provider_credits), works out what is left (the reading
// less the ledger's calls billed since) and its runway at the last hour's
// pace of billed calls, and writes one credits_low event per
// episode when the runway falls under RINDA_<PROVIDER>_RUNWAY_ALERT.
// `rindactl providers` shows it all per workspace and provider.
package credits

import (
	"fmt"
	"strings"
	"time"
)

const (
	// RefreshEnv says how often an account's credits are read at most.
	RefreshEnv = "RINDA_CREDITS_REFRESH"
	// RefreshDefault keeps the account endpoints' load negligible while a
	// runway of hours is still seen in time.
	RefreshDefault = 5 * time.Minute
	// RunwayAlertDefault is the runway under which credits_low is sent.
	RunwayAlertDefault = 6 * time.Hour
	// ReadTimeoutDefault bounds one reading of an account endpoint.
	ReadTimeoutDefault = 10 * time.Second
)

// RunwayAlertEnv names a provider's alert threshold variable.
func RunwayAlertEnv(provider string) string {
	return "RINDA_" + strings.ToUpper(provider) + "_RUNWAY_ALERT"
}

// Config is when credits are read and when their runway alerts.
type Config struct {
	// Every is the least time between two readings of one account.
	Every time.Duration
	// Alerts holds each provider's threshold; 0 turns its alert off.
	// A provider missing here has RunwayAlertDefault.
	Alerts      map[string]time.Duration
	ReadTimeout time.Duration
	// ReadUntil, when set, is the latest a reading may run (a tick's exit
	// bound: its deadline plus the provider timeout).
	ReadUntil time.Time
}

func (c Config) withDefaults() Config {
	if c.Every <= 0 {
		c.Every = RefreshDefault
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = ReadTimeoutDefault
	}
	return c
}

// AlertUnder is provider's threshold (0: no alert).
func (c Config) AlertUnder(provider string) time.Duration {
	if d, ok := c.Alerts[provider]; ok {
		return d
	}
	return RunwayAlertDefault
}

// ConfigFromEnv reads RINDA_CREDITS_REFRESH and, for each provider,
// RINDA_<PROVIDER>_RUNWAY_ALERT (a duration such as 6h, or off).
func ConfigFromEnv(getenv func(string) string, providers ...string) (Config, error) {
	c := Config{Every: RefreshDefault, Alerts: map[string]time.Duration{}, ReadTimeout: ReadTimeoutDefault}
	if v := strings.TrimSpace(getenv(RefreshEnv)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return c, fmt.Errorf("invalid %s %q: use a duration of at least 1m, e.g. 5m", RefreshEnv, v)
		}
		c.Every = d
	}
	for _, p := range providers {
		name := RunwayAlertEnv(p)
		switch v := strings.TrimSpace(getenv(name)); v {
		case "":
		case "off", "0":
			c.Alerts[p] = 0
		default:
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return c, fmt.Errorf("invalid %s %q: use a duration such as 6h, or off", name, v)
			}
			c.Alerts[p] = d
		}
	}
	return c, nil
}
