package providerhttp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/testkit"
)

const secret = "sk-live-SECRET-0123456789"

// newClient points a client at srv with the key in the query string, as
// Hunter and MillionVerifier do.
func newClient(t *testing.T, srv *httptest.Server, mod func(*providerhttp.Config)) *providerhttp.Client {
	t.Helper()
	base, err := providerhttp.ParseBaseURL("RINDA_TEST_BASE_URL", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg := providerhttp.Config{Provider: "test", APIKey: secret, BaseURL: base, MaxRetries: -1}
	if mod != nil {
		mod(&cfg)
	}
	return providerhttp.New(cfg)
}

// get runs one call whose parse returns the body for a 200, and a
// rate-limit error (with the answer's Retry-After) for a 429.
func get(ctx context.Context, c *providerhttp.Client) (string, error) {
	target := c.URL("/v1/find", url.Values{"api_key": {c.APIKey()}})
	return providerhttp.Do(ctx, c, providerhttp.Op[string]{
		NewRequest: func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		},
		Parse: func(c *providerhttp.Client, resp *providerhttp.Response) (string, error) {
			if resp.Status == http.StatusTooManyRequests {
				return "", c.RateLimited(resp, "slow down")
			}
			if resp.Status != http.StatusOK {
				return "", c.Unexpected(resp, c.Text(string(resp.Body)))
			}
			return string(resp.Body), nil
		},
	})
}

func TestDoSuccess(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("api_key") != secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("hello"))
	}))
	t.Cleanup(srv.Close)
	got, err := get(t.Context(), newClient(t, srv, nil))
	if err != nil || got != "hello" {
		t.Fatalf("get = %q, %v; want hello, nil", got, err)
	}
}

func TestDoMissingKeySendsNothing(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	_, err := get(t.Context(), newClient(t, srv, func(c *providerhttp.Config) { c.APIKey = "" }))
	pe := providertest.RequireError(t, err, enrich.KindAuth, secret)
	if !strings.Contains(pe.Message, "RINDA_TEST_API_KEY") {
		t.Errorf("message %q should name the variable to set", pe.Message)
	}
	if hits.Load() != 0 {
		t.Errorf("server saw %d requests, want 0", hits.Load())
	}
}

func TestDoTimeoutIsUnavailable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv, func(c *providerhttp.Config) { c.Timeout = 50 * time.Millisecond })
	_, err := get(t.Context(), c)
	pe := providertest.RequireError(t, err, enrich.KindUnavailable, secret)
	if !errors.Is(err, context.DeadlineExceeded) || !pe.Transient() {
		t.Errorf("err = %v; want a transient deadline error", err)
	}
}

func TestDoSlowBodyPastTimeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"data":`))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	// The timeout must outlast the headers' arrival on a loaded machine
	// (50 ms did not under CI's stress run): the body never ends, so the
	// test still ends at the timeout.
	c := newClient(t, srv, func(c *providerhttp.Config) { c.Timeout = 2 * time.Second })
	_, err := get(t.Context(), c)
	pe := providertest.RequireError(t, err, enrich.KindUnavailable, secret)
	if pe.Status != http.StatusOK || !strings.Contains(pe.Message, "reading response body") {
		t.Errorf("error = %v; want a body-read failure after a 200", pe)
	}
}

func TestDoCallerCancelled(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errors.New("terminated signal received"))
	_, err := get(ctx, newClient(t, srv, nil))
	pe := providertest.RequireError(t, err, enrich.KindCancelled, secret)
	if pe.Transient() || pe.Error() != "test: cancelled: call cancelled by the tick: terminated signal received" {
		t.Errorf("err = %v; want the tick's cancellation naming its cause, not transient", err)
	}
}

// Issue 29: the adapter's line says what ended the call: the provider
// refusing it (quota, throttle), failing it, or the tick cutting it (with the
// cause, at info: nothing for an operator to fix).
func TestDoLogLineNamesWhatEndedTheCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		cut    bool
		level  string
		msg    string
	}{
		{http.StatusTooManyRequests, false, "WARN", "provider answered: throttled"}, // issue 24: what the provider said
		{http.StatusBadGateway, false, "WARN", "provider call failed"},
		{http.StatusOK, true, "INFO", "call cancelled by the tick"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.cut {
				<-r.Context().Done()
				return
			}
			w.WriteHeader(tc.status)
		}))
		t.Cleanup(srv.Close)
		var logs testkit.Buffer
		ctx, cancel := context.WithCancelCause(t.Context())
		if tc.cut {
			cancel(errors.New("terminated signal received"))
		}
		_, err := get(ctx, newClient(t, srv, func(c *providerhttp.Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) }))
		cancel(nil)
		var rec struct{ Level, Msg, Cause string }
		if err == nil || json.Unmarshal([]byte(logs.String()), &rec) != nil || rec.Level != tc.level || rec.Msg != tc.msg ||
			(tc.cut != (rec.Cause == "terminated signal received")) {
			t.Errorf("HTTP %d (cut %v): logged %q, want one %s line %q, with the cause when cut", tc.status, tc.cut, logs.String(), tc.level, tc.msg)
		}
	}
}

func TestDoBodyLimit(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
	}))
	t.Cleanup(srv.Close)
	_, err := get(t.Context(), newClient(t, srv, func(c *providerhttp.Config) { c.MaxBody = 1024 }))
	pe := providertest.RequireError(t, err, enrich.KindUnavailable, secret)
	if !strings.Contains(pe.Message, "larger than 1024 bytes") {
		t.Errorf("message = %q; want it to name the limit", pe.Message)
	}
}

func TestDoRefusesRedirectToAnotherHost(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	_, err := get(t.Context(), newClient(t, srv, nil))
	providertest.RequireError(t, err, enrich.KindAuth, secret)
	if elsewhere.Load() != 0 {
		t.Fatalf("the other host received %d requests carrying the key", elsewhere.Load())
	}
}

func TestDoFollowsSameHostRedirect(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/find" {
			http.Redirect(w, r, "/v1/found?"+r.URL.RawQuery, http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("moved"))
	}))
	t.Cleanup(srv.Close)
	got, err := get(t.Context(), newClient(t, srv, nil))
	if err != nil || got != "moved" {
		t.Fatalf("get = %q, %v; want moved, nil", got, err)
	}
}

func TestDoConnectionRefusedDoesNotLeakKey(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	c := newClient(t, srv, nil)
	srv.Close()
	_, err := get(t.Context(), c)
	providertest.RequireError(t, err, enrich.KindUnavailable, secret)
}

func TestDoRetriesShortRetryAfter(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	got, err := get(t.Context(), newClient(t, srv, func(c *providerhttp.Config) { c.MaxRetries = 2 }))
	if err != nil || got != "ok" || hits.Load() != 2 {
		t.Fatalf("get = %q, %v after %d requests; want ok, nil after 2", got, err, hits.Load())
	}
}

func TestDoRetryIsBounded(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	_, err := get(t.Context(), newClient(t, srv, func(c *providerhttp.Config) { c.MaxRetries = 1 }))
	pe := providertest.RequireError(t, err, enrich.KindRateLimited, secret)
	if pe.RetryAfter != time.Second || hits.Load() != 2 {
		t.Fatalf("RetryAfter %s after %d requests; want 1s after 2 (one retry)", pe.RetryAfter, hits.Load())
	}
}

func TestDoDoesNotRetryLongRetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retryAfter string
		kind       enrich.ErrorKind
	}{
		{"30", enrich.KindRateLimited},                      // transient, but the tick's job
		{"600", enrich.KindQuota},                           // 10 minutes: the quota rule
		{"Mon, 02 Jan 2006 16:04:05 GMT", enrich.KindQuota}, // HTTP-date an hour ahead
	} {
		t.Run(tc.retryAfter, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Header().Set("Retry-After", tc.retryAfter)
				w.WriteHeader(http.StatusTooManyRequests)
			}))
			t.Cleanup(srv.Close)
			now := time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)
			_, err := get(t.Context(), newClient(t, srv, func(c *providerhttp.Config) {
				c.MaxRetries = 2
				c.Now = func() time.Time { return now }
			}))
			providertest.RequireError(t, err, tc.kind, secret)
			if hits.Load() != 1 {
				t.Fatalf("%d requests; want 1 (no in-call retry)", hits.Load())
			}
		})
	}
}

func TestDoRetryHonoursContext(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	// The tick's deadline ends while the adapter waits out Retry-After.
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	t.Cleanup(cancel)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	_, err := get(ctx, newClient(t, srv, func(c *providerhttp.Config) { c.MaxRetries = 2 }))
	// The retry was due: the tick cut the call, the provider did not fail it.
	providertest.RequireError(t, err, enrich.KindCancelled, secret)
	if hits.Load() != 1 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%d requests, error %v; want 1 and the tick's deadline as cause", hits.Load(), err)
	}
}

func TestTextSanitises(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	c := newClient(t, srv, nil)
	got := c.Text("bad key " + secret + "\r\nlevel=error injected" + strings.Repeat("y", 500))
	if strings.Contains(got, secret) || strings.ContainsAny(got, "\r\n") || len(got) > 210 {
		t.Fatalf("Text = %q; want key removed, no CR/LF, capped", got)
	}
}

func TestMalformedNamesHTML(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<html><body>maintenance</body></html>"))
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv, nil)
	target := c.URL("/", nil)
	_, err := providerhttp.Do(t.Context(), c, providerhttp.Op[map[string]any]{
		NewRequest: func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		},
		Parse: func(c *providerhttp.Client, resp *providerhttp.Response) (map[string]any, error) {
			var v map[string]any
			if pe := c.DecodeJSON(resp, &v); pe != nil {
				return nil, pe
			}
			return v, nil
		},
	})
	pe := providertest.RequireError(t, err, enrich.KindUnavailable, secret)
	if !strings.Contains(pe.Message, "text/html") {
		t.Errorf("message %q should name the content type", pe.Message)
	}
}

// Issue 25: a key with /+= echoed back by a provider, in the forms it was
// sent in (URL-encoded in the query) or stored in (JSON), is hidden from
// the error in each; only the literal form was before.
func TestDoHidesAnEchoedKeyInEveryForm(t *testing.T) {
	t.Parallel()
	const key = "k3y/with+plus=and/slash=="
	for name, echo := range map[string]func(r *http.Request) string{
		"raw query":    func(r *http.Request) string { return "bad request: " + r.URL.RawQuery },
		"path escaped": func(r *http.Request) string { return "bad key " + url.PathEscape(key) },
		"json":         func(r *http.Request) string { return `{"error":"invalid api_key","key":"k3y\/with+plus=and\/slash=="}` },
		"base64":       func(r *http.Request) string { return "auth " + base64.StdEncoding.EncodeToString([]byte("user:"+key)) },
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, echo(r))
		}))
		c := newClient(t, srv, func(cfg *providerhttp.Config) { cfg.APIKey = key })
		_, err := get(t.Context(), c)
		srv.Close()
		if err == nil || providerhttp.LeaksSecret(err, key) {
			t.Errorf("%s: error %v carries the key", name, err)
		}
	}
}
