package providertest

import (
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// RequireError fails t unless err is a *enrich.ProviderError of kind whose
// text, in every wrapped layer and encoding, leaks no secret (the API key
// the call carried); it returns the error for further checks.
func RequireError(t testing.TB, err error, kind enrich.ErrorKind, secret string) *enrich.ProviderError {
	t.Helper()
	pe, ok := enrich.AsProviderError(err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *enrich.ProviderError", err, err)
	}
	if pe.Kind != kind {
		t.Fatalf("kind = %s, want %s (error: %v)", pe.Kind, kind, err)
	}
	if providerhttp.LeaksSecret(err, secret) {
		t.Fatalf("API key leaked: %v", err)
	}
	return pe
}

// RequireKind is RequireError for one provider's answer: it also checks
// the provider's name and the HTTP status the error carries.
func RequireKind(t testing.TB, err error, provider string, kind enrich.ErrorKind, status int, secret string) *enrich.ProviderError {
	t.Helper()
	pe := RequireError(t, err, kind, secret)
	if pe.Status != status || pe.Provider != provider {
		t.Fatalf("err = %v; want %s %s (HTTP %d)", err, provider, kind, status)
	}
	return pe
}
