package hunter_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/hunter"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
)

const key = "hunter-SECRET-key-42"

var lead = enrich.Lead{ID: 7, WorkspaceID: 1, FirstName: "Ada", LastName: "Lovelace", Domain: "example.com"}

func newFinder(t *testing.T, baseURL string) enrich.Finder {
	t.Helper()
	env := map[string]string{"RINDA_HUNTER_API_KEY": key, "RINDA_HUNTER_BASE_URL": baseURL}
	f, err := hunter.Descriptor.NewFinder(func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func standIn(t *testing.T) *providertest.Server {
	t.Helper()
	s := providertest.NewHunter()
	t.Cleanup(s.Close)
	return s
}

func TestFindEmailFound(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	s.SetDirectory(func(first, last, domain string) (string, bool) { return first + "@" + domain, true })
	got, err := newFinder(t, s.URL()).FindEmail(t.Context(), lead)
	if err != nil {
		t.Fatal(err)
	}
	if got != (enrich.Finding{Email: "Ada@example.com", Found: true, Score: 94}) {
		t.Fatalf("finding = %+v", got)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Key != key || reqs[0].FirstName != "Ada" || reqs[0].LastName != "Lovelace" || reqs[0].Domain != "example.com" {
		t.Fatalf("requests = %+v; want one carrying the lead and key", reqs)
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

func TestFindEmailQuota429(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	s.QuotaAfter(1)
	f := newFinder(t, s.URL())
	if _, err := f.FindEmail(t.Context(), lead); err != nil {
		t.Fatalf("first call: %v", err)
	}
	_, err := f.FindEmail(t.Context(), lead)
	providertest.RequireKind(t, err, hunter.Name, enrich.KindQuota, http.StatusTooManyRequests, key)
	if s.Count() != 2 {
		t.Fatalf("stand-in saw %d calls; want 2 (quota is never retried)", s.Count())
	}
}

func TestFindEmailRateLimit403(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, retryAfter string
		kind             enrich.ErrorKind
		wait             time.Duration
	}{
		{"no Retry-After", "", enrich.KindRateLimited, 0},
		{"short", "30", enrich.KindRateLimited, 30 * time.Second},
		{"ten minutes is quota", "600", enrich.KindQuota, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := standIn(t)
			s.RateLimit(tc.retryAfter)
			_, err := newFinder(t, s.URL()).FindEmail(t.Context(), lead)
			pe := providertest.RequireKind(t, err, hunter.Name, tc.kind, http.StatusForbidden, key)
			if pe.RetryAfter != tc.wait || s.Count() != 1 {
				t.Fatalf("RetryAfter = %s after %d calls; want %s after 1", pe.RetryAfter, s.Count(), tc.wait)
			}
		})
	}
}

func TestFindEmailAuth(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	s.SetKeys("another-key")
	_, err := newFinder(t, s.URL()).FindEmail(t.Context(), lead)
	providertest.RequireKind(t, err, hunter.Name, enrich.KindAuth, http.StatusUnauthorized, key)
}

func TestFindEmailMissingKeyMakesNoCall(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	f, err := hunter.Descriptor.NewFinder(func(k string) string { return map[string]string{"RINDA_HUNTER_BASE_URL": s.URL()}[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.FindEmail(t.Context(), lead)
	providertest.RequireKind(t, err, hunter.Name, enrich.KindAuth, 0, key)
	if s.Count() != 0 {
		t.Fatalf("stand-in saw %d calls; want 0", s.Count())
	}
}

func TestFindEmailInvalidLead400(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	_, err := newFinder(t, s.URL()).FindEmail(t.Context(), enrich.Lead{FirstName: "Ada"})
	pe := providertest.RequireKind(t, err, hunter.Name, enrich.KindInvalidLead, http.StatusBadRequest, key)
	if pe.Message != "wrong_params: You are missing the domain parameter" {
		t.Fatalf("message = %q; want Hunter's error id and details", pe.Message)
	}
}

// answer serves one canned Hunter answer.
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

func TestFindEmailClassification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		kind        enrich.ErrorKind
		wantStatus  int
	}{
		{"422 unprocessable", 422, "application/json", `{"errors":[{"id":"invalid_domain","code":422,"details":"The domain is invalid"}]}`, enrich.KindInvalidLead, 422},
		{"500", 500, "application/json", `{"errors":[{"id":"internal_error","code":500,"details":"Something went wrong"}]}`, enrich.KindUnavailable, 500},
		{"HTML 502", 502, "text/html", "<html><head><title>502 Bad Gateway</title></head></html>", enrich.KindUnavailable, 502},
		{"200 with quota inside", 200, "application/json", `{"errors":[{"id":"too_many_requests","code":429,"details":"usage limit"}]}`, enrich.KindQuota, 200},
		{"200 with auth inside", 200, "application/json", `{"errors":[{"id":"authentication_failed","code":401,"details":"No user found"}]}`, enrich.KindAuth, 200},
		{"200 HTML", 200, "text/html", "<!DOCTYPE html><html>login</html>", enrich.KindUnavailable, 200},
		{"200 truncated JSON", 200, "application/json", `{"data":{"email":"ada@exa`, enrich.KindUnavailable, 200},
		{"200 neither data nor errors", 200, "application/json", `{}`, enrich.KindUnavailable, 200},
		{"200 email not an address", 200, "application/json", `{"data":{"email":"not an address"}}`, enrich.KindUnavailable, 200},
		{"404 endpoint", 404, "text/html", "<html>Not Found</html>", enrich.KindAuth, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := newFinder(t, answer(t, tc.status, tc.contentType, tc.body)).FindEmail(t.Context(), lead)
			providertest.RequireKind(t, err, hunter.Name, tc.kind, tc.wantStatus, key)
		})
	}
}

func TestFindEmailLegalRefusalIsMiss(t *testing.T) {
	t.Parallel()
	url := answer(t, 451, "application/json", `{"errors":[{"id":"claimed_email","code":451,"details":"The person behind this email address asked us to stop processing it"}]}`)
	got, err := newFinder(t, url).FindEmail(t.Context(), lead)
	if err != nil || got.Found {
		t.Fatalf("FindEmail = %+v, %v; want a clean miss", got, err)
	}
}

func TestFindEmailScoreClamped(t *testing.T) {
	t.Parallel()
	url := answer(t, 200, "application/json", `{"data":{"email":"ada@example.com","score":150},"meta":{}}`)
	got, err := newFinder(t, url).FindEmail(t.Context(), lead)
	if err != nil || got.Score != 100 {
		t.Fatalf("FindEmail = %+v, %v; want score clamped to 100", got, err)
	}
}

func TestNewForcesName(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	base, err := providerhttp.ParseBaseURL("X", s.URL())
	if err != nil {
		t.Fatal(err)
	}
	f := hunter.New(providerhttp.Config{Provider: "other", APIKey: key, BaseURL: base})
	_, err = f.FindEmail(t.Context(), enrich.Lead{FirstName: "Ada"})
	providertest.RequireKind(t, err, hunter.Name, enrich.KindInvalidLead, http.StatusBadRequest, key)
}
