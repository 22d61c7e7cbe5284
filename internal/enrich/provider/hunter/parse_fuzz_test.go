package hunter

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// FuzzParse feeds arbitrary answers to the parser: it must not panic, must
// answer with a finding or a classified *enrich.ProviderError, must only
// report plausible addresses, and must never echo the key.
func FuzzParse(f *testing.F) {
	const key = "fuzz-SECRET-key"
	f.Add(200, "", `{"data":{"email":"ada@example.com","score":94},"meta":{}}`)
	f.Add(200, "", `{"data":{"email":null,"score":null},"meta":{}}`)
	f.Add(429, "", `{"errors":[{"id":"too_many_requests","code":429,"details":"You've reached the limit"}]}`)
	f.Add(403, "12", `{"errors":[{"id":"rate_limited","code":403,"details":"rate limit"}]}`)
	f.Add(200, "", `{"errors":[{"id":"x","code":403,"details":"fuzz-SECRET-key"}]}`)
	f.Add(502, "", `<html>bad gateway</html>`)
	f.Add(200, "", `{"data":{"email":"jo`)
	f.Add(200, "", `{"data":[],"errors":{}}`)
	c := providerhttp.New(providerhttp.Config{Provider: Name, APIKey: key, BaseURL: &url.URL{Scheme: "http", Host: "h"}})
	f.Fuzz(func(t *testing.T, status int, retryAfter, body string) {
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		got, err := parse(c, &providerhttp.Response{Status: status, Header: h, Body: []byte(body)})
		if err != nil {
			pe, ok := enrich.AsProviderError(err)
			if !ok || pe.Kind == "" || pe.RetryAfter < 0 {
				t.Fatalf("unclassified error %#v", err)
			}
			if providerhttp.LeaksSecret(err, key) {
				t.Fatalf("key leaked: %v", err)
			}
			return
		}
		if got.Found != (got.Email != "") || (got.Found && !providerhttp.PlausibleEmail(got.Email)) || got.Score < 0 || got.Score > 100 {
			t.Fatalf("inconsistent finding %+v", got)
		}
	})
}
