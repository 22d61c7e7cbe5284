package providertest_test

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
	"github.com/rindactl/rindactl/internal/enrich/provider/hunter"
	"github.com/rindactl/rindactl/internal/enrich/provider/millionverifier"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
)

func reporter(t *testing.T, s *providertest.Server, apiKey string) enrich.CreditReporter {
	t.Helper()
	base, err := providerhttp.ParseBaseURL("X", s.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg := providerhttp.Config{APIKey: apiKey, BaseURL: base, Timeout: time.Second, MaxRetries: -1}
	switch s.Provider() {
	case hunter.Name:
		return hunter.New(cfg)
	case findymail.Name:
		return findymail.New(cfg)
	}
	return millionverifier.New(cfg)
}

// Issue 24: every adapter reads its provider's account endpoint in the
// real format (Hunter's /v2/account searches, Findymail's /api/credits,
// MillionVerifier's /api/v3/credits); the stand-ins answer it per key, a
// billed answer takes a credit, and reading the credits takes none.
func TestCreditsEndpoints(t *testing.T) {
	t.Parallel()
	for _, start := range []func() *providertest.Server{providertest.NewHunter, providertest.NewFindymail, providertest.NewMillionVerifier} {
		s := start()
		t.Cleanup(s.Close)
		t.Run(s.Provider(), func(t *testing.T) {
			t.Parallel()
			s.SetKeys(key, "other")
			s.SetCredits(key, 42)
			r := reporter(t, s, key)
			c, err := r.Credits(context.Background())
			if err != nil || c.Remaining != 42 {
				t.Fatalf("credits = %+v, %v; want 42", c, err)
			}
			if err := call(t, s, time.Second); err != nil { // found (or a verdict): billed
				t.Fatal(err)
			}
			if c, err := r.Credits(context.Background()); err != nil || c.Remaining != 41 {
				t.Fatalf("after one billed call: %+v, %v; want 41", c, err)
			}
			if s.Count() != 1 || s.CreditReads() != 2 || s.Credits(key) != 41 || s.Credits("other") != providertest.CreditsDefault {
				t.Fatalf("%d requests, %d credit reads, %d left: reading credits must be free and per key", s.Count(), s.CreditReads(), s.Credits(key))
			}
			_, err = reporter(t, s, "refused-key").Credits(context.Background())
			if pe, ok := enrich.AsProviderError(err); !ok || pe.Kind != enrich.KindAuth {
				t.Fatalf("refused key: %v; want auth", err)
			}
			// Out of credits: the key gets the quota answer, the other one not.
			s.SetCredits(key, 0)
			if pe, ok := enrich.AsProviderError(call(t, s, time.Second)); !ok || pe.Kind != enrich.KindQuota {
				t.Fatalf("a key without credits: %v; want its quota answer", pe)
			}
		})
	}
}
