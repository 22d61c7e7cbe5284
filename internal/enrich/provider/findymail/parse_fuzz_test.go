package findymail

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// FuzzParse: any answer parses without panicking into a finding or a
// classified error that never echoes the key.
func FuzzParse(f *testing.F) {
	const key = "fuzz-SECRET-key"
	f.Add(200, "", `{"contact":{"name":"Ada Lovelace","email":"ada@example.com","domain":"example.com"}}`)
	f.Add(200, "", `{"contact":[]}`)
	f.Add(200, "", `{"error":"Not enough credits"}`)
	f.Add(402, "", `{"error":"Not enough credits"}`)
	f.Add(429, "", `{"error":"monthly plan limit reached"}`)
	f.Add(429, "30", `{"message":"Too Many Attempts."}`)
	f.Add(429, "Wed, 21 Oct 2015 07:28:00 GMT", `{"message":"Too Many Attempts."}`)
	f.Add(422, "", `{"message":"The domain field is required.","errors":{"domain":["required"]}}`)
	f.Add(401, "", `{"message":"fuzz-SECRET-key is Unauthenticated."}`)
	f.Add(502, "", `<html>bad gateway</html>`)
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
		if got.Found != (got.Email != "") || (got.Found && !providerhttp.PlausibleEmail(got.Email)) {
			t.Fatalf("inconsistent finding %+v", got)
		}
	})
}
