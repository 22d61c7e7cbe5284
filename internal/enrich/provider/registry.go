// Package provider builds the enrichment providers by name. The adapters
// live in the hunter, findymail and millionverifier subpackages; the HTTP
// plumbing they share is in providerhttp; providertest holds stand-in
// servers speaking their wire formats.
package provider

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
	"github.com/rindactl/rindactl/internal/enrich/provider/hunter"
	"github.com/rindactl/rindactl/internal/enrich/provider/millionverifier"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// Finders lists the known finder names.
func Finders() []string { return []string{findymail.Name, hunter.Name} }

// Verifiers lists the known verifier names.
func Verifiers() []string { return []string{millionverifier.Name} }

// Option adjusts a provider's configuration beyond the environment.
type Option func(*providerhttp.Config)

// WithLogger sends the adapter's log lines (one warn line per deliberate
// block: provider, endpoint, status, retry_after_ms, max_retries) to log.
func WithLogger(log *slog.Logger) Option {
	return func(c *providerhttp.Config) { c.Logger = log }
}

// NewFinder configures the named finder from the environment (getenv is
// os.Getenv in production). A missing API key is not an error here: the
// finder reports it through enrich.Configurable, so a tick leaves it out
// and says so, and its calls fail with enrich.KindAuth without a request.
// A malformed RINDA_<PROVIDER>_BASE_URL is an error.
func NewFinder(name string, getenv func(string) string, opts ...Option) (enrich.Finder, error) {
	switch n := strings.ToLower(strings.TrimSpace(name)); n {
	case hunter.Name:
		cfg, err := config(n, hunter.BaseURLDefault, getenv, opts)
		if err != nil {
			return nil, err
		}
		return hunter.New(cfg), nil
	case findymail.Name:
		cfg, err := config(n, findymail.BaseURLDefault, getenv, opts)
		if err != nil {
			return nil, err
		}
		return findymail.New(cfg), nil
	}
	return nil, unknown(name, "finder", Finders())
}

// NewVerifier configures the named verifier from the environment, with the
// same rules as NewFinder.
func NewVerifier(name string, getenv func(string) string, opts ...Option) (enrich.Verifier, error) {
	if n := strings.ToLower(strings.TrimSpace(name)); n == millionverifier.Name {
		cfg, err := config(n, millionverifier.BaseURLDefault, getenv, opts)
		if err != nil {
			return nil, err
		}
		return millionverifier.New(cfg), nil
	}
	return nil, unknown(name, "verifier", Verifiers())
}

func config(name, baseURL string, getenv func(string) string, opts []Option) (providerhttp.Config, error) {
	cfg, err := providerhttp.ConfigFromEnv(name, baseURL, getenv)
	if err != nil {
		return cfg, err
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg, nil
}

func unknown(name, role string, known []string) error {
	n := strings.ToLower(strings.TrimSpace(name))
	if slices.Contains(Finders(), n) || slices.Contains(Verifiers(), n) {
		return fmt.Errorf("provider %q is not a %s; %ss are: %s", name, role, role, strings.Join(known, ", "))
	}
	return fmt.Errorf("unknown %s %q; known %ss: %s", role, name, role, strings.Join(known, ", "))
}
