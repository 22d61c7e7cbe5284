package demo

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// meter sits in front of a provider stand-in and records when each call
// started and when, and with which status, it was answered. The stand-in
// only knows arrivals; telling "calls made after the quota answer" from
// "calls already in flight when it came" needs both ends.
type meter struct {
	ts *httptest.Server

	mu    sync.Mutex
	calls []meteredCall
}

type meteredCall struct {
	start, end time.Time
	status     int
}

func newMeter(upstream string) *meter {
	m := &meter{}
	target, _ := url.Parse(upstream)
	proxy := httputil.NewSingleHostReverseProxy(target)
	m.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		proxy.ServeHTTP(rec, r)
		m.mu.Lock()
		m.calls = append(m.calls, meteredCall{start: start, end: time.Now(), status: rec.status})
		m.mu.Unlock()
	}))
	return m
}

// URL is the base URL to give the adapter instead of the stand-in's.
func (m *meter) URL() string { return m.ts.URL }

func (m *meter) Close() { m.ts.Close() }

// quotaCalls summarises the calls around the first quota answer (402 or
// 429): when it was sent; how many calls were already in flight then (they
// got a quota answer too); how many started after it but before the breaker
// opened (the time the tick took to learn and record it); and how many
// started after the breaker opened.
type quotaCalls struct {
	First         time.Time
	InFlight      int
	BeforeBreaker int
	AfterBreaker  int
}

// quota reports the calls around the first quota answer, if there was one;
// breakerOpened is when the breaker opened (zero if it never did).
func (m *meter) quota(breakerOpened time.Time) (quotaCalls, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var q quotaCalls
	for _, c := range m.calls {
		if isQuotaStatus(c.status) && (q.First.IsZero() || c.end.Before(q.First)) {
			q.First = c.end
		}
	}
	if q.First.IsZero() {
		return q, false
	}
	for _, c := range m.calls {
		switch {
		case !breakerOpened.IsZero() && c.start.After(breakerOpened):
			q.AfterBreaker++
		case c.start.After(q.First):
			q.BeforeBreaker++
		case isQuotaStatus(c.status) && !c.end.Equal(q.First):
			q.InFlight++
		}
	}
	return q, true
}

// count is the number of calls made so far.
func (m *meter) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

func isQuotaStatus(code int) bool {
	return code == http.StatusPaymentRequired || code == http.StatusTooManyRequests
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
