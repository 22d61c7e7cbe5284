package millionverifier

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// FuzzParse: any answer parses without panicking into one of the five
// verdicts or a classified error that never echoes the key.
func FuzzParse(f *testing.F) {
	const key = "fuzz-SECRET-key"
	f.Add(200, "", `{"email":"a@b.c","quality":"good","result":"ok","resultcode":1,"subresult":"ok","free":false,"role":false,"credits":3454,"executiontime":2,"error":"","livemode":true}`)
	f.Add(200, "", `{"email":"a@b.c","result":"error","resultcode":4,"error":"Insufficient credits","credits":0}`)
	f.Add(200, "", `{"email":"a@b.c","result":"error","resultcode":4,"error":"Apikey not found fuzz-SECRET-key"}`)
	f.Add(200, "", `{"result":"catch_all","resultcode":2}`)
	f.Add(429, "5", `{"error":"Too many requests"}`)
	f.Add(502, "", `<html>bad gateway</html>`)
	f.Add(200, "", `{"result":`)
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
		if _, known := verdicts[string(got)]; !known {
			t.Fatalf("verdict %q is not one of the five", got)
		}
	})
}
