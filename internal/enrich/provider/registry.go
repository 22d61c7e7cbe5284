// Package provider builds the enrichment providers by name. The adapters
// live in the hunter, findymail and millionverifier subpackages, each
// exporting its providerspec.Descriptor (constructor, default limits and
// price, stand-in); the HTTP plumbing they share is in providerhttp;
// providertest runs the stand-ins as servers.
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
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

// descriptors is every known provider, by name. Adding a provider is one
// package exporting a Descriptor and one line here.
var descriptors = []providerspec.Descriptor{findymail.Descriptor, hunter.Descriptor, millionverifier.Descriptor}

// Lookup returns the named provider's descriptor (name as spelled in
// flags: lower case).
func Lookup(name string) (providerspec.Descriptor, bool) {
	for _, d := range descriptors {
		if d.Name == name {
			return d, true
		}
	}
	return providerspec.Descriptor{}, false
}

// DefaultLimits are the documented bucket and price of each named
// provider, from its descriptor, for guard.ConfigFromEnv; an unknown name
// gets no bucket and no price.
func DefaultLimits(names ...string) map[string]providerspec.Limits {
	out := make(map[string]providerspec.Limits, len(names))
	for _, name := range names {
		d, _ := Lookup(name)
		out[name] = d.Limits
	}
	return out
}

// Finders lists the known finder names.
func Finders() []string { return names(providerspec.Finder) }

// Verifiers lists the known verifier names.
func Verifiers() []string { return names(providerspec.Verifier) }

func names(role providerspec.Role) []string {
	var out []string
	for _, d := range descriptors {
		if d.Role == role {
			out = append(out, d.Name)
		}
	}
	return out
}

// Option adjusts how a provider is built beyond the environment.
type Option func(*options)

type options struct {
	log    *slog.Logger
	apiKey string
}

// WithLogger sends the adapter's log lines (one warn line per deliberate
// block: provider, endpoint, status, retry_after_ms, max_retries) to log.
func WithLogger(log *slog.Logger) Option { return func(o *options) { o.log = log } }

// WithAPIKey builds the adapter with key (a workspace's own) instead of
// RINDA_<PROVIDER>_API_KEY; the other variables still apply.
func WithAPIKey(key string) Option { return func(o *options) { o.apiKey = key } }

// env is getenv with the key option applied for provider name.
func (o options) env(name string, getenv func(string) string) func(string) string {
	if o.apiKey == "" {
		return getenv
	}
	keyVar := providerhttp.KeyEnv(name)
	return func(k string) string {
		if k == keyVar {
			return o.apiKey
		}
		return getenv(k)
	}
}

// NewFinder configures the named finder from the environment (getenv is
// os.Getenv in production). A missing API key is not an error here: the
// finder reports it through enrich.Configurable, so a tick leaves it out
// and says so, and its calls fail with enrich.KindAuth without a request.
// A malformed RINDA_<PROVIDER>_BASE_URL or _TIMEOUT is an error.
func NewFinder(name string, getenv func(string) string, opts ...Option) (enrich.Finder, error) {
	if d, ok := Lookup(strings.ToLower(strings.TrimSpace(name))); ok && d.Role == providerspec.Finder {
		o := collect(opts)
		return d.NewFinder(o.env(d.Name, getenv), o.log)
	}
	return nil, unknown(name, "finder", Finders())
}

// NewVerifier configures the named verifier from the environment, with the
// same rules as NewFinder.
func NewVerifier(name string, getenv func(string) string, opts ...Option) (enrich.Verifier, error) {
	if d, ok := Lookup(strings.ToLower(strings.TrimSpace(name))); ok && d.Role == providerspec.Verifier {
		o := collect(opts)
		return d.NewVerifier(o.env(d.Name, getenv), o.log)
	}
	return nil, unknown(name, "verifier", Verifiers())
}

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

func unknown(name, role string, known []string) error {
	n := strings.ToLower(strings.TrimSpace(name))
	if slices.Contains(Finders(), n) || slices.Contains(Verifiers(), n) {
		return fmt.Errorf("provider %q is not a %s; %ss are: %s", name, role, role, strings.Join(known, ", "))
	}
	return fmt.Errorf("unknown %s %q; known %ss: %s", role, name, role, strings.Join(known, ", "))
}

// OwnAdapters builds, for every workspace with its own keys (keys:
// workspace id → provider → key), the adapters of the named finders and
// verifier ("" for none) it has a key for, for enrich.TickConfig's
// OwnFinders and OwnVerifiers. Keys of other providers are ignored.
func OwnAdapters(keys map[int64]map[string]string, finders []string, verifier string, getenv func(string) string, opts ...Option) (map[int64]map[string]enrich.Finder, map[int64]enrich.Verifier, error) {
	ownF, ownV := map[int64]map[string]enrich.Finder{}, map[int64]enrich.Verifier{}
	for ws, byProvider := range keys {
		for _, name := range finders {
			key, ok := byProvider[name]
			if !ok {
				continue
			}
			f, err := NewFinder(name, getenv, append(opts, WithAPIKey(key))...)
			if err != nil {
				return nil, nil, err
			}
			if ownF[ws] == nil {
				ownF[ws] = map[string]enrich.Finder{}
			}
			ownF[ws][name] = f
		}
		if key, ok := byProvider[verifier]; ok && verifier != "" {
			v, err := NewVerifier(verifier, getenv, append(opts, WithAPIKey(key))...)
			if err != nil {
				return nil, nil, err
			}
			ownV[ws] = v
		}
	}
	return ownF, ownV, nil
}
