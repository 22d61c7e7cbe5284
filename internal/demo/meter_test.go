package demo

import (
	"net/http"
	"testing"
	"time"
)

func TestMeterTellsInFlightFromLaterCalls(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 6, 5, 5, 40, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := &meter{calls: []meteredCall{
		{start: at(0), end: at(5), status: http.StatusOK},
		{start: at(8), end: at(10), status: http.StatusPaymentRequired},  // the first quota answer
		{start: at(9), end: at(12), status: http.StatusPaymentRequired},  // in flight when it came
		{start: at(11), end: at(13), status: http.StatusTooManyRequests}, // after it, before the breaker
		{start: at(30), end: at(31), status: http.StatusPaymentRequired}, // while the breaker was open
		{start: at(40), end: at(41), status: http.StatusOK},              // the probe that found credits
	}}
	q, ok := m.quota(at(20))
	if !ok {
		t.Fatal("no quota answer found")
	}
	want := quotaCalls{First: at(10), InFlight: 1, BeforeBreaker: 1, AfterBreaker: 2}
	if q != want {
		t.Fatalf("quota() = %+v, want %+v", q, want)
	}
	if q, _ := m.quota(time.Time{}); q.BeforeBreaker != 3 || q.AfterBreaker != 0 {
		t.Fatalf("without a breaker every later call counts before it: %+v", q)
	}
	if _, ok := (&meter{calls: []meteredCall{{start: at(0), end: at(1), status: http.StatusOK}}}).quota(at(0)); ok {
		t.Fatal("a provider that never answered quota reported as exhausted")
	}
}

func TestSpread(t *testing.T) {
	t.Parallel()
	lo, hi, cv := spread(map[string]int{"a": 90, "b": 100, "c": 110})
	if lo != 90 || hi != 110 || cv < 0.0816 || cv > 0.0817 {
		t.Fatalf("spread = %d, %d, %.4f; want 90, 110, 0.0816", lo, hi, cv)
	}
	if lo, hi, cv := spread(nil); lo != 0 || hi != 0 || cv != 0 {
		t.Fatalf("spread(nil) = %d, %d, %f", lo, hi, cv)
	}
}
