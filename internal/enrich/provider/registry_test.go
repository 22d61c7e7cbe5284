package provider_test

import (
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
)

func TestNewFinderAndVerifier(t *testing.T) {
	t.Parallel()
	set := providertest.StartAll()
	t.Cleanup(set.Close)
	lead := enrich.Lead{FirstName: "Ada", LastName: "Lovelace", Domain: "example.com"}
	set.Hunter.SetDirectory(func(string, string, string) (string, bool) { return "ada@example.com", true })
	set.Findymail.SetDirectory(func(string, string, string) (string, bool) { return "ada@example.com", true })
	for _, name := range provider.Finders() {
		f, err := provider.NewFinder(strings.ToUpper(name), set.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.FindEmail(t.Context(), lead)
		if err != nil || f.Name() != name || got.Email != "ada@example.com" {
			t.Fatalf("%s: %+v, %v", name, got, err)
		}
	}
	v, err := provider.NewVerifier("millionverifier", set.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := v.Verify(t.Context(), "ada@example.com"); err != nil || got != enrich.VerdictOK {
		t.Fatalf("Verify = %q, %v", got, err)
	}
}

func TestNewRejectsUnknownAndWrongRole(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	for _, tc := range []struct {
		err  error
		want string
	}{
		{second(provider.NewFinder("clearbit", getenv)), `unknown finder "clearbit"; known finders: findymail, hunter`},
		{second(provider.NewFinder("millionverifier", getenv)), `provider "millionverifier" is not a finder`},
		{second(provider.NewVerifier("hunter", getenv)), `provider "hunter" is not a verifier`},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("err = %v; want it to contain %q", tc.err, tc.want)
		}
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	t.Parallel()
	env := map[string]string{"RINDA_HUNTER_BASE_URL": "https://api.hunter.io/v2"}
	_, err := provider.NewFinder("hunter", func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "RINDA_HUNTER_BASE_URL") {
		t.Fatalf("err = %v; want it to name RINDA_HUNTER_BASE_URL", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestDescriptorsComplete: every registered provider brings what the
// registry, the guard and providertest read from its descriptor.
func TestDescriptorsComplete(t *testing.T) {
	t.Parallel()
	for _, name := range append(provider.Finders(), provider.Verifiers()...) {
		d, ok := provider.Lookup(name)
		switch {
		case !ok || d.Name != name:
			t.Errorf("%s: Lookup = %+v, %v", name, d, ok)
		case (d.Role == providerspec.Finder) == (d.NewFinder == nil), (d.Role == providerspec.Verifier) == (d.NewVerifier == nil):
			t.Errorf("%s: role %s without exactly its constructor", name, d.Role)
		case !d.Limits.Rate.Enabled() || d.Limits.Burst < 1 || d.Limits.CostUSD <= 0:
			t.Errorf("%s: default limits %+v lack a rate, burst or price", name, d.Limits)
		case d.StandIn == nil:
			t.Errorf("%s: no stand-in", name)
		default:
			descriptorRoundTrip(t, d)
		}
	}
	if _, ok := provider.Lookup("clearbit"); ok {
		t.Error("Lookup found an unknown provider")
	}
}

// descriptorRoundTrip builds the adapter from the descriptor alone, points
// it at the descriptor's stand-in and makes one call.
func descriptorRoundTrip(t *testing.T, d providerspec.Descriptor) {
	t.Helper()
	srv := providertest.Start(d.Name)
	defer srv.Close()
	env := srv.Env(providertest.KeyDefault)
	getenv := func(k string) string { return env[k] }
	var err error
	if d.Role == providerspec.Finder {
		var f enrich.Finder
		if f, err = d.NewFinder(getenv, nil); err == nil {
			var got enrich.Finding
			got, err = f.FindEmail(t.Context(), enrich.Lead{FirstName: "Ada", LastName: "Lovelace", Domain: "example.com"})
			if err == nil && got.Email != "ada.lovelace@example.com" {
				t.Errorf("%s: found %q through its stand-in, want ada.lovelace@example.com", d.Name, got.Email)
			}
		}
	} else {
		var v enrich.Verifier
		if v, err = d.NewVerifier(getenv, nil); err == nil {
			var got enrich.Verdict
			if got, err = v.Verify(t.Context(), "ada@example.com"); err == nil && got != enrich.VerdictOK {
				t.Errorf("%s: verdict %q through its stand-in, want ok", d.Name, got)
			}
		}
	}
	if err != nil {
		t.Errorf("%s through its stand-in: %v", d.Name, err)
	}
	if srv.Count() != 1 {
		t.Errorf("%s: stand-in saw %d requests, want 1", d.Name, srv.Count())
	}
}
