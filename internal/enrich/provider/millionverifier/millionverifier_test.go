package millionverifier_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/millionverifier"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
)

const key = "mv-SECRET-key-42"

func newVerifier(t *testing.T, baseURL string) enrich.Verifier {
	t.Helper()
	env := map[string]string{"RINDA_MILLIONVERIFIER_API_KEY": key, "RINDA_MILLIONVERIFIER_BASE_URL": baseURL}
	v, err := millionverifier.Descriptor.NewVerifier(func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func standIn(t *testing.T) *providertest.Server {
	t.Helper()
	s := providertest.NewMillionVerifier()
	t.Cleanup(s.Close)
	return s
}

func TestVerifyVerdicts(t *testing.T) {
	t.Parallel()
	for _, want := range []enrich.Verdict{enrich.VerdictOK, enrich.VerdictCatchAll, enrich.VerdictUnknown, enrich.VerdictInvalid, enrich.VerdictDisposable} {
		t.Run(string(want), func(t *testing.T) {
			t.Parallel()
			s := standIn(t)
			s.SetVerdicts(func(string) enrich.Verdict { return want })
			got, err := newVerifier(t, s.URL()).Verify(t.Context(), "ada+test@example.com")
			if err != nil || got != want {
				t.Fatalf("Verify = %q, %v; want %q", got, err, want)
			}
			if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Email != "ada+test@example.com" || reqs[0].Key != key {
				t.Fatalf("requests = %+v; want the address (with its +) and the key", reqs)
			}
		})
	}
}

// Errors arrive as HTTP 200 with resultcode 4 and an error string.
func TestVerifyErrorIn200(t *testing.T) {
	t.Parallel()
	t.Run("insufficient credits", func(t *testing.T) {
		t.Parallel()
		s := standIn(t)
		s.QuotaAfter(0)
		_, err := newVerifier(t, s.URL()).Verify(t.Context(), "ada@example.com")
		pe := providertest.RequireKind(t, err, millionverifier.Name, enrich.KindQuota, http.StatusOK, key)
		if pe.Message != "Insufficient credits" {
			t.Fatalf("message = %q", pe.Message)
		}
	})
	t.Run("apikey not found", func(t *testing.T) {
		t.Parallel()
		s := standIn(t)
		s.SetKeys("another")
		_, err := newVerifier(t, s.URL()).Verify(t.Context(), "ada@example.com")
		providertest.RequireKind(t, err, millionverifier.Name, enrich.KindAuth, http.StatusOK, key)
	})
	for _, tc := range []struct {
		name, body string
		kind       enrich.ErrorKind
	}{
		{"invalid api key", `{"result":"error","resultcode":4,"error":"Invalid API key"}`, enrich.KindAuth},
		{"ip blocked", `{"result":"error","resultcode":4,"error":"IP address blocked"}`, enrich.KindAuth},
		{"internal error", `{"result":"error","resultcode":4,"error":"Internal error"}`, enrich.KindUnavailable},
		{"no email", `{"result":"error","resultcode":4,"error":"No email specified"}`, enrich.KindInvalidLead},
		{"error result without text", `{"result":"error","resultcode":4,"error":""}`, enrich.KindUnavailable},
		{"unknown result", `{"result":"maybe","resultcode":9,"error":""}`, enrich.KindUnavailable},
		{"truncated", `{"result":"o`, enrich.KindUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := newVerifier(t, answer(t, 200, tc.body)).Verify(t.Context(), "ada@example.com")
			providertest.RequireKind(t, err, millionverifier.Name, tc.kind, http.StatusOK, key)
		})
	}
}

func answer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestVerifyRateLimited(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	s.RateLimit("45")
	_, err := newVerifier(t, s.URL()).Verify(t.Context(), "ada@example.com")
	pe := providertest.RequireKind(t, err, millionverifier.Name, enrich.KindRateLimited, http.StatusTooManyRequests, key)
	if pe.RetryAfter.Seconds() != 45 {
		t.Fatalf("RetryAfter = %s; want 45s", pe.RetryAfter)
	}
}

func TestVerifyNotAnAddressMakesNoCall(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	_, err := newVerifier(t, s.URL()).Verify(t.Context(), "no-at-sign")
	providertest.RequireKind(t, err, millionverifier.Name, enrich.KindInvalidLead, 0, key)
	if s.Count() != 0 {
		t.Fatalf("stand-in saw %d calls; want 0", s.Count())
	}
}
