package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/credits"
	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/events"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/tickkind"
	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// The RINDA_* settings a tick checks at its start, read in one place: each
// tick's prepare calls readTickSettings over its environment and so does
// doctor for every scheduled unit over the environment that unit gets, so
// doctor rejects exactly what a tick rejects (exit 2). tickSettingNames
// lists every such variable with a value the ticks reject;
// TestSettingsAgree walks them.

// tickSettings are a tick's settings, parsed.
type tickSettings struct {
	// CallTimeout is the longest provider HTTP timeout (enrich).
	CallTimeout  time.Duration
	InDoubtRetry time.Duration
	Credits      credits.Config
	Guard        guard.Config
	// UnsubscribeBase is RINDA_UNSUBSCRIBE_BASE_URL checked ("": unset).
	UnsubscribeBase string
}

// readTickSettings reads the settings a tick of kind checks at its start
// (providers: the enrich tick's finders and verifier) through getenv, an
// empty value counting as unset as in every tick. An error names the
// variable, never a secret value.
func readTickSettings(kind tickkind.Kind, providers []string, getenv func(string) string) (tickSettings, error) {
	var s tickSettings
	// Every tick delivers the outbox's events after its work.
	if err := events.CheckWebhookURL(getenv(events.SlackWebhookEnv)); err != nil {
		return s, err
	}
	switch kind {
	case tickkind.Email:
		return s, s.readEmail(getenv)
	case tickkind.Enrich:
		return s, s.readEnrich(providers, getenv)
	}
	return s, nil
}

func (s *tickSettings) readEmail(getenv func(string) string) error {
	if helo := getenv(sequence.HELOEnv); helo != "" && !sequence.ValidGreetingName(helo) {
		return fmt.Errorf("%s=%q is not a fully qualified host name (mail.example.com) or an address literal ([192.0.2.1]); mail servers refuse a bare name", sequence.HELOEnv, helo)
	}
	if raw := getenv(unsubscribe.BaseURLEnv); raw != "" {
		base, err := unsubscribe.ParseBaseURL(raw)
		if err != nil {
			return err
		}
		s.UnsubscribeBase = base
	}
	return nil
}

func (s *tickSettings) readEnrich(providers []string, getenv func(string) string) error {
	for _, name := range providers {
		// The base URL and timeout, as the adapter reads them.
		if _, err := providerhttp.ConfigFromEnv(name, "https://"+name+".invalid", getenv); err != nil {
			return err
		}
		timeout, err := providerhttp.TimeoutFromEnv(name, getenv)
		if err != nil {
			return err
		}
		s.CallTimeout = max(s.CallTimeout, timeout)
	}
	var err error
	if s.InDoubtRetry, err = enrich.InDoubtRetryFromEnv(getenv); err != nil {
		return err
	}
	if s.Credits, err = credits.ConfigFromEnv(getenv, providers...); err != nil {
		return err
	}
	s.Guard, err = guard.ConfigFromEnv(getenv, provider.DefaultLimits(providers...))
	return err
}

// tickSetting is one variable readTickSettings checks: the tick kinds
// that read it (nil: every kind), a value they reject and one they accept.
type tickSetting struct {
	Name      string
	Kinds     []tickkind.Kind
	Bad, Good string
}

// tickSettingNames are the variables readTickSettings checks, for the
// finders of a generated enrich unit (enrichProvidersDefault).
func tickSettingNames() []tickSetting {
	enrichOnly := []tickkind.Kind{tickkind.Enrich}
	out := []tickSetting{
		{Name: events.SlackWebhookEnv, Bad: "ftp://hooks.example/x", Good: "https://hooks.slack.com/services/T0/B0/x"},
		{Name: sequence.HELOEnv, Kinds: []tickkind.Kind{tickkind.Email}, Bad: "myhost", Good: "mail.example.com"},
		{Name: unsubscribe.BaseURLEnv, Kinds: []tickkind.Kind{tickkind.Email}, Bad: "http://unsubscribe.example.com", Good: "https://unsubscribe.example.com"},
		{Name: enrich.InDoubtRetryEnv, Kinds: enrichOnly, Bad: "soon", Good: "off"},
		{Name: credits.RefreshEnv, Kinds: enrichOnly, Bad: "1s", Good: "10m"},
		{Name: "RINDA_BREAKER_QUOTA_OPEN", Kinds: enrichOnly, Bad: "-1m", Good: "10m"},
		{Name: "RINDA_BREAKER_TRANSIENT_OPEN", Kinds: enrichOnly, Bad: "later", Good: "2m"},
		{Name: "RINDA_BREAKER_FAILURES", Kinds: enrichOnly, Bad: "0", Good: "3"},
	}
	for _, p := range enrichProvidersDefault {
		out = append(out,
			tickSetting{Name: providerhttp.TimeoutEnv(p), Kinds: enrichOnly, Bad: "1h", Good: "30s"},
			tickSetting{Name: providerhttp.BaseURLEnv(p), Kinds: enrichOnly, Bad: "ftp://api.example.com", Good: "https://api.example.com"},
			tickSetting{Name: credits.RunwayAlertEnv(p), Kinds: enrichOnly, Bad: "soon", Good: "off"},
			tickSetting{Name: "RINDA_" + strings.ToUpper(p) + "_RATE", Kinds: enrichOnly, Bad: "fast", Good: "5/s"},
			tickSetting{Name: "RINDA_" + strings.ToUpper(p) + "_BURST", Kinds: enrichOnly, Bad: "0", Good: "2"},
			tickSetting{Name: "RINDA_" + strings.ToUpper(p) + "_RATE_SCOPE", Kinds: enrichOnly, Bad: "host", Good: "workspace"},
			tickSetting{Name: "RINDA_" + strings.ToUpper(p) + "_COST_USD", Kinds: enrichOnly, Bad: "free", Good: "0.05"},
			tickSetting{Name: "RINDA_" + strings.ToUpper(p) + "_BILL_MISSES", Kinds: enrichOnly, Bad: "maybe", Good: "true"},
		)
	}
	return out
}
