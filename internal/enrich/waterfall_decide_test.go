package enrich

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The waterfall's per-call decisions, without a database or a provider.

func TestRefusal(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 3, 4, 10, 5, 0, 0, time.UTC)
	retry := until.Add(time.Minute)
	guardDown := errors.New("guard: connection refused")
	cases := []struct {
		name      string
		adm       Admission
		err       error
		cancelled bool
		ok        bool
		want      step
	}{
		{"admitted", Admission{Allowed: true}, nil, false, true, step{}},
		{"admitted while stopping still calls", Admission{Allowed: true}, nil, true, true, step{}},
		{"breaker open", Admission{Until: until, Reason: "breaker_open"}, nil, false, false, step{kind: stepBlocked, until: until, reason: "breaker_open"}},
		{"rate slot beyond the tick", Admission{Until: until, Reason: ReasonRateLimited}, nil, false, false, step{kind: stepBlocked, until: until, reason: ReasonRateLimited}},
		{"guard could not decide", Admission{}, guardDown, false, false, step{kind: stepBlocked, until: retry, reason: reasonGuardError}},
		{"guard cut short by the signal", Admission{}, guardDown, true, false, step{kind: stepStopped}},
	}
	for _, tc := range cases {
		got, ok := refusal(tc.adm, tc.err, tc.cancelled, retry)
		if ok != tc.ok || got.kind != tc.want.kind || !got.until.Equal(tc.want.until) || got.reason != tc.want.reason {
			t.Errorf("%s: refusal = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFailedStep(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind    ErrorKind
		step    stepKind
		outcome CallOutcome
	}{
		{KindQuota, stepQuota, ""},
		{KindAuth, stepUnusable, ""},
		{KindInvalidLead, stepAnswered, CallNotFound},
		{KindRateLimited, stepFailed, ""},
		{KindUnavailable, stepFailed, ""},
	}
	for _, tc := range cases {
		pe := &ProviderError{Provider: "hunter", Kind: tc.kind}
		s := failedStep(pe)
		if s.kind != tc.step || s.outcome != tc.outcome || s.err != pe || !s.called {
			t.Errorf("%s: step %+v, want kind %d outcome %q, the error, and called", tc.kind, s, tc.step, tc.outcome)
		}
		if tc.step != stepUnusable && failureMessage[s.kind] == "" {
			t.Errorf("%s: no log line for step %d", tc.kind, s.kind)
		}
	}
}

func TestAsProviderError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if asProviderError(ctx, "hunter", nil) != nil {
		t.Error("no error must stay no error")
	}
	quota := &ProviderError{Provider: "hunter", Kind: KindQuota}
	if got := asProviderError(ctx, "hunter", fmt.Errorf("wrapped: %w", quota)); got != quota {
		t.Errorf("a wrapped provider error must be found, got %+v", got)
	}
	got := asProviderError(ctx, "findymail", errors.New("panic in adapter"))
	if got == nil || got.Kind != KindUnavailable || got.Provider != "findymail" || !got.Transient() {
		t.Errorf("a foreign error must count as the provider's outage, got %+v", got)
	}
	// Once the tick's context is done, a foreign error is the tick's cut,
	// named with its cause.
	stopped, stop := context.WithCancelCause(ctx)
	stop(errors.New("terminated signal received"))
	got = asProviderError(stopped, "findymail", stopped.Err())
	if got == nil || got.Kind != KindCancelled || got.Transient() || !strings.Contains(got.Error(), "call cancelled by the tick: terminated signal received") {
		t.Errorf("an error after the tick stopped must be its cancellation, got %+v", got)
	}
}

func TestCallOutcome(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cases := []struct {
		err  error
		hit  bool
		want CallOutcome
	}{
		{nil, true, CallFound},
		{nil, false, CallNotFound},
		{boom, false, CallFailed},
		{boom, true, CallFailed},
	}
	for _, tc := range cases {
		got, err := callOutcome(tc.err, tc.hit)
		if got != tc.want || err != tc.err {
			t.Errorf("callOutcome(%v, %v) = %q, %v; want %q", tc.err, tc.hit, got, err, tc.want)
		}
	}
}

func TestLeadResultAddBlock(t *testing.T) {
	t.Parallel()
	at := time.Now()
	var lr leadResult
	lr.add("hunter", step{kind: stepBlocked, until: at.Add(5 * time.Minute), reason: "breaker_open", cause: string(KindQuota)})
	lr.add("findymail", step{kind: stepBlocked, until: at.Add(2 * time.Hour), reason: "ceiling_reached"})
	lr.add("findymail", step{kind: stepBlocked, until: at.Add(2 * time.Minute), reason: "breaker_open", cause: string(KindRateLimited), retryAfter: 2 * time.Minute})
	lr.add("hunter", step{kind: stepBlocked, until: at.Add(time.Minute), reason: "breaker_open", cause: string(KindUnavailable)})
	lr.add("hunter", step{kind: stepBlocked, until: at.Add(12 * time.Minute), reason: "breaker_open", cause: string(KindRateLimited)})
	lr.add("hunter", step{kind: stepBlocked, until: at.Add(30 * time.Second), reason: ReasonRateLimited})
	lr.add("findymail", step{kind: stepBlocked, until: at.Add(10 * time.Second), reason: reasonGuardError})
	lr.add("hunter", step{kind: stepBlocked, until: at.Add(20 * time.Second), reason: ReasonRateLimited})
	if lr.blocked.provider != "hunter" || !lr.blocked.until.Equal(at.Add(5*time.Minute)) {
		t.Errorf("verdict %+v, want hunter's quota breaker, the earliest of those no wait ends", lr.blocked)
	}
	if lr.waiting.provider != "hunter" || !lr.waiting.until.Equal(at.Add(time.Minute)) {
		t.Errorf("wait %+v, want hunter's outage breaker, the earliest to end within ten minutes", lr.waiting)
	}
	if lr.rateBlocked.reason != reasonGuardError || !lr.rateBlocked.until.Equal(at.Add(10*time.Second)) {
		t.Errorf("rate block %+v, want the undecided guard's, the earliest of the short ones", lr.rateBlocked)
	}
}

// Issue 24: a block is a wait when it ends within ten minutes and no quota
// or refused key is behind it; its words name the cause.
func TestWaitsAndTheirWords(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		s    step
		wait bool
		text string
	}{
		{step{until: now.Add(2 * time.Minute), reason: "breaker_open", cause: "rate_limited", retryAfter: 120 * time.Second}, true, "findymail throttled until "},
		{step{until: now.Add(9 * time.Minute), reason: "breaker_open", cause: "unavailable"}, true, "findymail unavailable until "},
		{step{until: now.Add(5 * time.Minute), reason: "breaker_open", cause: "quota_exhausted"}, false, "findymail quota exhausted: breaker_open until "},
		{step{until: now.Add(5 * time.Minute), reason: "breaker_open", cause: "auth"}, false, "findymail refused our key"},
		{step{until: now.Add(11 * time.Minute), reason: "breaker_open", cause: "rate_limited"}, false, "findymail throttled until "},
		{step{until: now.Add(time.Minute), reason: "breaker_open", cause: CauseProbe}, true, "a probe call decides"},
		{step{until: now.Add(3 * time.Minute), reason: "breaker_open", cause: "provider renegotiating"}, true, "(provider renegotiating)"},
		{step{until: now.Add(48 * time.Hour), reason: "ceiling_reached"}, false, "findymail blocked until "},
	} {
		if got := waits(tc.s, now); got != tc.wait {
			t.Errorf("%+v: waits = %v, want %v", tc.s, got, tc.wait)
		}
		var b block
		b.earlier("findymail", tc.s)
		if txt := b.text(); !strings.Contains(txt, tc.text) {
			t.Errorf("%+v: text %q lacks %q", tc.s, txt, tc.text)
		}
	}
	var b block
	b.earlier("findymail", step{until: now.Add(2 * time.Minute), reason: "breaker_open", cause: "rate_limited", retryAfter: 120 * time.Second})
	if txt := b.text(); !strings.Contains(txt, ", Retry-After 120 s") {
		t.Errorf("text %q does not give the Retry-After", txt)
	}
}
