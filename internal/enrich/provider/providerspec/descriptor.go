// Package providerspec describes an enrichment provider in one value, its
// Descriptor: the adapter's constructor, the guard's default bucket and
// price, and the stand-in that speaks its wire format. Each adapter package
// (hunter, findymail, millionverifier) exports its Descriptor; the registry
// (package provider, whose DefaultLimits the enrich tick gives the guard)
// and providertest read it, so adding a provider touches one package plus
// one line in the registry.
// This package imports no adapter, so the adapters and the guard can both
// depend on it.
package providerspec

import (
	"log/slog"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// Role is what a provider does in the waterfall.
type Role string

const (
	Finder   Role = "finder"
	Verifier Role = "verifier"
)

// Descriptor is everything rindactl knows about one provider.
type Descriptor struct {
	// Name is used in flags, errors, metrics and RINDA_<NAME>_*.
	Name string
	Role Role
	// NewFinder (Role Finder) or NewVerifier (Role Verifier) configures the
	// adapter from the environment; its log lines go to log (nil discards).
	NewFinder   func(getenv func(string) string, log *slog.Logger) (enrich.Finder, error)
	NewVerifier func(getenv func(string) string, log *slog.Logger) (enrich.Verifier, error)
	// Limits are the documented defaults (docs/guards.md has the sources);
	// RINDA_<NAME>_RATE, _BURST, _RATE_SCOPE, _COST_USD and _BILL_MISSES
	// override them.
	Limits Limits
	// StandIn answers like the provider, for providertest and the demo.
	StandIn StandIn
}

// FinderFromEnv is Descriptor.NewFinder for an adapter built by newFinder
// from RINDA_<NAME>_API_KEY and RINDA_<NAME>_BASE_URL (baseURL when unset).
func FinderFromEnv[F enrich.Finder](name, baseURL string, newFinder func(providerhttp.Config) F) func(func(string) string, *slog.Logger) (enrich.Finder, error) {
	return func(getenv func(string) string, log *slog.Logger) (enrich.Finder, error) {
		return providerhttp.FromEnv(name, baseURL, getenv, log, func(cfg providerhttp.Config) enrich.Finder { return newFinder(cfg) })
	}
}

// VerifierFromEnv is Descriptor.NewVerifier for an adapter built by
// newVerifier, from the same variables as FinderFromEnv.
func VerifierFromEnv[V enrich.Verifier](name, baseURL string, newVerifier func(providerhttp.Config) V) func(func(string) string, *slog.Logger) (enrich.Verifier, error) {
	return func(getenv func(string) string, log *slog.Logger) (enrich.Verifier, error) {
		return providerhttp.FromEnv(name, baseURL, getenv, log, func(cfg providerhttp.Config) enrich.Verifier { return newVerifier(cfg) })
	}
}
