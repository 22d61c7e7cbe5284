package findymail_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
)

const key = "findymail-SECRET-key-42"

var lead = enrich.Lead{ID: 7, WorkspaceID: 1, FirstName: "Ada", LastName: "Lovelace", Domain: "example.com"}

func newFinder(t *testing.T, baseURL string) enrich.Finder {
	t.Helper()
	env := map[string]string{"RINDA_FINDYMAIL_API_KEY": key, "RINDA_FINDYMAIL_BASE_URL": baseURL}
	f, err := findymail.Descriptor.NewFinder(func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func standIn(t *testing.T) *providertest.Server {
	t.Helper()
	s := providertest.NewFindymail()
	t.Cleanup(s.Close)
	return s
}

func TestFindEmailFound(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	s.SetDirectory(func(first, last, domain string) (string, bool) {
		return "ada@" + domain, first == "Ada" && last == "Lovelace"
	})
	got, err := newFinder(t, s.URL()).FindEmail(t.Context(), lead)
	if err != nil || got != (enrich.Finding{Email: "ada@example.com", Found: true}) {
		t.Fatalf("FindEmail = %+v, %v", got, err)
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Key != key || reqs[0].Domain != "example.com" {
		t.Fatalf("requests = %+v; want one with the Bearer key and the lead's domain", reqs)
	}
}

func TestFindEmailMissIsClean(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	s.SetDirectory(func(string, string, string) (string, bool) { return "", false })
	got, err := newFinder(t, s.URL()).FindEmail(t.Context(), lead)
	if err != nil || got.Found {
		t.Fatalf("FindEmail = %+v, %v; want a clean miss", got, err)
	}
}

func TestFindEmailQuota402(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	s.SetMode(providertest.ModeQuotaExhausted)
	_, err := newFinder(t, s.URL()).FindEmail(t.Context(), lead)
	pe := providertest.RequireKind(t, err, findymail.Name, enrich.KindQuota, http.StatusPaymentRequired, key)
	if pe.Message != "Not enough credits" || s.Count() != 1 {
		t.Fatalf("message %q after %d calls; want Findymail's text after 1", pe.Message, s.Count())
	}
}

// The incident: a 429 with no Retry-After whose body speaks of the plan.
func TestFindEmailIncident429IsQuota(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	s.SetMode(providertest.ModeQuota429)
	_, err := newFinder(t, s.URL()).FindEmail(t.Context(), lead)
	providertest.RequireKind(t, err, findymail.Name, enrich.KindQuota, http.StatusTooManyRequests, key)
	if s.Count() != 1 {
		t.Fatalf("stand-in saw %d calls; want 1", s.Count())
	}
}

func TestFindEmailThrottle429(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	for _, tc := range []struct {
		name, retryAfter string
		kind             enrich.ErrorKind
	}{
		{"no Retry-After, throttle body", "", enrich.KindRateLimited},
		{"delta seconds under 10 min", "120", enrich.KindRateLimited},
		{"delta seconds of 10 min", "600", enrich.KindQuota},
		{"HTTP-date in 2 min", now.Add(2 * time.Minute).Format(http.TimeFormat), enrich.KindRateLimited},
		{"HTTP-date in 1 hour", now.Add(time.Hour).Format(http.TimeFormat), enrich.KindQuota},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := standIn(t)
			s.RateLimit(tc.retryAfter)
			_, err := newFinder(t, s.URL()).FindEmail(t.Context(), lead)
			providertest.RequireKind(t, err, findymail.Name, tc.kind, http.StatusTooManyRequests, key)
			if s.Count() != 1 {
				t.Fatalf("stand-in saw %d calls; want 1 (wait too long to retry in-call)", s.Count())
			}
		})
	}
}

func TestFindEmailAuth401(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	s.SetKeys("someone-else")
	_, err := newFinder(t, s.URL()).FindEmail(t.Context(), lead)
	providertest.RequireKind(t, err, findymail.Name, enrich.KindAuth, http.StatusUnauthorized, key)
}

func TestFindEmailInvalidLead422(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	_, err := newFinder(t, s.URL()).FindEmail(t.Context(), enrich.Lead{FirstName: "Ada"})
	pe := providertest.RequireKind(t, err, findymail.Name, enrich.KindInvalidLead, http.StatusUnprocessableEntity, key)
	if pe.Message != "The domain field is required." {
		t.Fatalf("message = %q", pe.Message)
	}
}

func answer(t *testing.T, status int, contentType, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFindEmailMisses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"404 JSON", 404, `{"error":"Contact not found"}`},
		{"contact null", 200, `{"contact":null}`},
		{"contact PHP empty array", 200, `{"contact":[]}`},
		{"contact without email", 200, `{"contact":{"name":"Ada Lovelace","email":null}}`},
		{"empty object", 200, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := newFinder(t, answer(t, tc.status, "application/json", tc.body)).FindEmail(t.Context(), lead)
			if err != nil || got.Found {
				t.Fatalf("FindEmail = %+v, %v; want a clean miss", got, err)
			}
		})
	}
}

func TestFindEmailClassification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		kind        enrich.ErrorKind
	}{
		{"200 with credits error inside", 200, "application/json", `{"error":"Not enough credits"}`, enrich.KindQuota},
		{"200 with other error inside", 200, "application/json", `{"error":"Something happened"}`, enrich.KindUnavailable},
		{"403 subscription", 403, "application/json", `{"message":"Your subscription is inactive"}`, enrich.KindQuota},
		{"403 forbidden", 403, "application/json", `{"message":"Forbidden"}`, enrich.KindAuth},
		{"HTML 404", 404, "text/html", "<html>Not Found</html>", enrich.KindAuth},
		{"HTML 502", 502, "text/html", "<html><title>502 Bad Gateway</title></html>", enrich.KindUnavailable},
		{"500 JSON", 500, "application/json", `{"message":"Server Error"}`, enrich.KindUnavailable},
		{"200 malformed", 200, "application/json", `{"contact":{"email":`, enrich.KindUnavailable},
		{"200 contact wrong type", 200, "application/json", `{"contact":"ada@example.com"}`, enrich.KindUnavailable},
		{"418 unexpected", 418, "application/json", `{"message":"teapot"}`, enrich.KindUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := newFinder(t, answer(t, tc.status, tc.contentType, tc.body)).FindEmail(t.Context(), lead)
			providertest.RequireKind(t, err, findymail.Name, tc.kind, tc.status, key)
		})
	}
}
