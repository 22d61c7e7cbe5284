package enrich_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/redact/redacttest"
	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 37, finding 5: a provider that echoes the key in its 401 body, or
// in the Location of a redirect, spelled with %20 or every byte
// percent-encoded, as JSON \uXXXX or HTML references, had it stored in the
// database (lead_enrichment.last_error, breakers, events) and shown by
// `why lead`. Each place is read back with the standard library's
// decoders (redacttest.Leaks); the tick's log is written without the
// redacting handler, so what it shows comes from the sources.
func TestEchoedKeyLeavesItNowhere(t *testing.T) {
	t.Parallel()
	const key = "k3y/with+plus= and&more<99>"
	for _, tc := range []struct {
		provider string
		mode     providertest.Mode
	}{
		{"hunter", providertest.ModeAuthEcho},
		{"findymail", providertest.ModeAuthEcho},
		{"hunter", providertest.ModeRedirectEcho},
		{"findymail", providertest.ModeRedirectEcho},
	} {
		t.Run(tc.provider+"/"+string(tc.mode), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.seed(t, "acme", 3)
			srv := e.set.Hunter
			if tc.provider == "findymail" {
				srv = e.set.Findymail
			}
			srv.SetMode(tc.mode)
			cfg := e.config(t)
			f, err := provider.NewFinder(tc.provider, func(name string) string {
				if name == providerhttp.KeyEnv(tc.provider) {
					return key
				}
				return e.set.Getenv(name)
			})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Finders = []enrich.Finder{f}
			e.tick(t, cfg)
			if srv.Count() == 0 || srv.RedirectHits() != 0 {
				t.Fatalf("%d calls, %d redirects followed: want the key refused at home", srv.Count(), srv.RedirectHits())
			}
			texts := map[string]string{"the tick's log": e.log.String(), "the database": storetest.Dump(t, e.db.Pool)}
			for _, ref := range []string{"acme-0", "acme-2"} {
				x, err := status.ExplainLead(context.Background(), e.db.Pool, time.Now(), ref, "acme", 24*time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(x)
				texts["why lead "+ref] += string(b)
			}
			// The provider's text is cut at 200 bytes: a spelling cut there
			// shows the key's first part, a leak too.
			for what, text := range texts {
				if enc := redacttest.Leaks(text, key[:10]); enc != "" {
					t.Errorf("the key (or its first part) appears in %s, spelled %s: %s", what, enc, text)
				}
			}
			// The redirect is refused without its Location; the 401's body
			// is kept, its echoes hidden.
			if tc.mode == providertest.ModeAuthEcho && !strings.Contains(texts["the database"], "No user found for the API key supplied: [redacted]") {
				t.Errorf("nothing of the echo was stored: the test proves nothing\n%s", texts["the database"])
			}
		})
	}
}
