package providertest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
	"github.com/rindactl/rindactl/internal/enrich/provider/hunter"
	"github.com/rindactl/rindactl/internal/enrich/provider/millionverifier"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
)

const key = "hostile-SECRET-key-99"

var lead = enrich.Lead{ID: 1, WorkspaceID: 1, FirstName: "Grace", LastName: "Hopper", Domain: "navy.example"}

// call sends one request through the real adapter for s's provider.
func call(t *testing.T, s *providertest.Server, timeout time.Duration) error {
	t.Helper()
	base, err := providerhttp.ParseBaseURL("X", s.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg := providerhttp.Config{APIKey: key, BaseURL: base, Timeout: timeout, MaxRetries: -1}
	ctx := context.Background()
	switch s.Provider() {
	case hunter.Name:
		_, err = hunter.New(cfg).FindEmail(ctx, lead)
	case findymail.Name:
		_, err = findymail.New(cfg).FindEmail(ctx, lead)
	default:
		_, err = millionverifier.New(cfg).Verify(ctx, "grace.hopper@navy.example")
	}
	return err
}

// Every hostile behaviour is classified (never a crash, never a bare error),
// never leaks the key, and never follows a redirect off the host.
func TestHostileProviders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode providertest.Mode
		kind enrich.ErrorKind
	}{
		{providertest.ModeServerError, enrich.KindUnavailable},
		{providertest.ModeSlow, enrich.KindUnavailable},
		{providertest.ModeMalformed, enrich.KindUnavailable},
		{providertest.ModeHugeBody, enrich.KindUnavailable},
		{providertest.ModeTruncated, enrich.KindUnavailable},
		{providertest.ModeRedirect, enrich.KindAuth},
		{providertest.ModeQuotaExhausted, enrich.KindQuota},
		{providertest.ModeQuota429, enrich.KindQuota},
	} {
		for _, start := range []func() *providertest.Server{providertest.NewHunter, providertest.NewFindymail, providertest.NewMillionVerifier} {
			s := start()
			t.Cleanup(s.Close)
			t.Run(string(tc.mode)+"/"+s.Provider(), func(t *testing.T) {
				t.Parallel()
				s.SetMode(tc.mode)
				// Only the slow server needs the timeout to fire (it holds
				// a request 30 s); 200 ms for every mode timed out before a
				// malformed answer arrived under CI's stress runs (0 calls).
				timeout := 10 * time.Second
				if tc.mode == providertest.ModeSlow {
					timeout = 2 * time.Second
				}
				err := call(t, s, timeout)
				pe, ok := enrich.AsProviderError(err)
				if !ok || pe.Kind != tc.kind {
					t.Fatalf("err = %v; want %s", err, tc.kind)
				}
				if providerhttp.LeaksSecret(err, key) {
					t.Fatalf("API key leaked: %v", err)
				}
				if s.Count() != 1 || s.RedirectHits() != 0 {
					t.Fatalf("%d calls, %d redirect hits; want 1 and 0", s.Count(), s.RedirectHits())
				}
			})
		}
	}
}

func TestQuotaAfterCountsPerKeyAndReset(t *testing.T) {
	t.Parallel()
	s := providertest.NewHunter()
	t.Cleanup(s.Close)
	s.SetDirectory(func(first, last, domain string) (string, bool) { return "g@" + domain, true })
	s.QuotaAfter(2)
	for i := range 2 {
		if err := call(t, s, time.Second); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	pe, ok := enrich.AsProviderError(call(t, s, time.Second))
	if !ok || pe.Kind != enrich.KindQuota || pe.Status != http.StatusTooManyRequests {
		t.Fatalf("third call: %v; want Hunter's 429 quota", pe)
	}
	if s.Count() != 3 || s.CountKey(key) != 3 || s.CountKey("other") != 0 {
		t.Fatalf("Count %d, CountKey %d; want 3 and 3", s.Count(), s.CountKey(key))
	}
	s.Reset()
	s.QuotaAfter(-1)
	if err := call(t, s, time.Second); err != nil || s.Count() != 1 {
		t.Fatalf("after Reset: %v with %d calls; want success with 1", err, s.Count())
	}
}

func TestDefaultDirectoryIsDeterministic(t *testing.T) {
	t.Parallel()
	misses := 0
	for i := range 1000 {
		first := "user" + string(rune('a'+i%26))
		last := "n" + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
		email, found := providertest.DefaultDirectory(first, last, "acme.example")
		if found == providertest.IsDefaultMiss(first, last, "acme.example") {
			t.Fatalf("DefaultDirectory and IsDefaultMiss disagree for %s %s", first, last)
		}
		if !found {
			misses++
			continue
		}
		if email != first+"."+last+"@acme.example" {
			t.Fatalf("email = %q", email)
		}
	}
	if misses < 100 || misses > 300 {
		t.Fatalf("%d misses in 1000; want about one in five", misses)
	}
}

func TestMaxInWindow(t *testing.T) {
	t.Parallel()
	s := providertest.NewFindymail()
	t.Cleanup(s.Close)
	for range 3 {
		if err := call(t, s, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.MaxInWindow(time.Hour); got != 3 {
		t.Fatalf("MaxInWindow(1h) = %d; want 3", got)
	}
	if got := s.MaxInWindow(time.Nanosecond); got != 1 {
		t.Fatalf("MaxInWindow(1ns) = %d; want 1", got)
	}
}

func TestSetEnvPointsEveryAdapter(t *testing.T) {
	t.Parallel()
	set := providertest.StartAll()
	t.Cleanup(set.Close)
	env := set.Env()
	for _, s := range set.All() {
		if env[providerhttp.BaseURLEnv(s.Provider())] != s.URL() || env[providerhttp.KeyEnv(s.Provider())] != providertest.KeyDefault {
			t.Fatalf("Env = %v; missing %s", env, s.Provider())
		}
	}
	f, err := findymail.Descriptor.NewFinder(set.Getenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.FindEmail(t.Context(), lead); err != nil {
		t.Fatal(err)
	}
	if set.Findymail.CountKey(providertest.KeyDefault) != 1 || set.Hunter.Count() != 0 {
		t.Fatalf("findymail %d calls, hunter %d; want 1 and 0", set.Findymail.Count(), set.Hunter.Count())
	}
}
