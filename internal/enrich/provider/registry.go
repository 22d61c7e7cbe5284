// Package provider builds the enrichment providers by name. The adapters
// live in the hunter, findymail and millionverifier subpackages; the HTTP
// plumbing they share is in providerhttp; providertest holds stand-in
// servers speaking their wire formats.
package provider

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
	"github.com/rindactl/rindactl/internal/enrich/provider/hunter"
	"github.com/rindactl/rindactl/internal/enrich/provider/millionverifier"
)

// Finders lists the known finder names.
func Finders() []string { return []string{findymail.Name, hunter.Name} }

// Verifiers lists the known verifier names.
func Verifiers() []string { return []string{millionverifier.Name} }

// NewFinder configures the named finder from the environment (getenv is
// os.Getenv in production). A missing API key is not an error: the finder
// then answers every call with enrich.KindAuth without a request, so a tick
// skips that provider and alerts while the others keep working. A malformed
// RINDA_<PROVIDER>_BASE_URL is an error.
func NewFinder(name string, getenv func(string) string) (enrich.Finder, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case hunter.Name:
		return hunter.FromEnv(getenv)
	case findymail.Name:
		return findymail.FromEnv(getenv)
	}
	return nil, unknown(name, "finder", Finders())
}

// NewVerifier configures the named verifier from the environment, with the
// same rules as NewFinder.
func NewVerifier(name string, getenv func(string) string) (enrich.Verifier, error) {
	if strings.ToLower(strings.TrimSpace(name)) == millionverifier.Name {
		return millionverifier.FromEnv(getenv)
	}
	return nil, unknown(name, "verifier", Verifiers())
}

func unknown(name, role string, known []string) error {
	n := strings.ToLower(strings.TrimSpace(name))
	if slices.Contains(Finders(), n) || slices.Contains(Verifiers(), n) {
		return fmt.Errorf("provider %q is not a %s; %ss are: %s", name, role, role, strings.Join(known, ", "))
	}
	return fmt.Errorf("unknown %s %q; known %ss: %s", role, name, role, strings.Join(known, ", "))
}
