package events_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/events"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// slackHook is an incoming-webhook stand-in: it answers like Slack ("ok",
// or an error status) and keeps every message it accepted.
type slackHook struct {
	*httptest.Server
	failNext atomic.Int32
	mu       sync.Mutex
	messages []map[string]any
}

func newSlackHook(t *testing.T) *slackHook {
	h := &slackHook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if h.failNext.Add(-1) >= 0 {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, "internal_error")
			return
		}
		var msg map[string]any
		if err := json.Unmarshal(body, &msg); err != nil || msg["text"] == nil || msg["blocks"] == nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "invalid_payload")
			return
		}
		time.Sleep(5 * time.Millisecond) // let concurrent deliverers overlap
		h.mu.Lock()
		h.messages = append(h.messages, msg)
		h.mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *slackHook) texts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, m := range h.messages {
		out = append(out, m["text"].(string))
	}
	return out
}

func TestEventsEachEpisodePostedOnceByConcurrentDeliverers(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 20)
	g := guard.New(db.Pool, unlimited, nil)
	// Five racing calls all meet the quota: one episode.
	var wg sync.WaitGroup
	for i := range 5 {
		a := admit(t, g, call(ws, int64(i+1), "findymail"))
		wg.Add(1)
		go func() { defer wg.Done(); settle(t, g, a, quotaErr()) }()
	}
	wg.Wait()
	hook := newSlackHook(t)

	reports := make([]events.DeliveryReport, 4)
	for i := range reports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := store.Open(ctx, store.Config{URL: db.URL, MaxConns: 2})
			if err != nil {
				t.Error(err)
				return
			}
			defer pool.Close()
			reports[i], err = events.DeliverEvents(ctx, pool, hook.URL, events.DeliverOptions{Batch: 1})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// One incident, one alert: quota_exhausted carries the reason and the
	// reopen time; breaker_opened stays in the outbox, unposted.
	texts := hook.texts()
	if len(texts) != 1 {
		t.Fatalf("slack got %d messages, want 1 (the episode's quota_exhausted): %q", len(texts), texts)
	}
	quota := 0
	for _, txt := range texts {
		if strings.HasPrefix(txt, "Provider quota exhausted") {
			quota++
			for _, want := range []string{"workspace acme", "provider findymail", "reason quota_exhausted", "blocked until "} {
				if !strings.Contains(txt, want) {
					t.Errorf("fallback text %q lacks %q", txt, want)
				}
			}
		}
	}
	if quota != 1 {
		t.Fatalf("%d quota_exhausted messages, want 1", quota)
	}
	// Nothing left; another run posts nothing.
	rep, err := events.DeliverEvents(ctx, db.Pool, hook.URL, events.DeliverOptions{})
	if err != nil || rep.Delivered != 0 || len(hook.texts()) != 1 {
		t.Fatalf("second run: %+v %v, %d messages", rep, err, len(hook.texts()))
	}
	rows, err := store.Events(ctx, db.Pool, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, e := range rows {
		kinds[e.Kind] = e.Alert
	}
	if len(rows) != 2 || !kinds["quota_exhausted"] || kinds["breaker_opened"] {
		t.Fatalf("outbox %+v, want quota_exhausted (the alert) and breaker_opened (listed, not posted)", rows)
	}
}

func TestEventsFailedPostRetriedLaterNotDoubled(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ws := newWorkspace(t, db.Pool, "acme")
	if _, err := guard.OpenBreaker(ctx, db.Pool, ws, "hunter", time.Hour, "manual"); err != nil {
		t.Fatal(err)
	}

	// No webhook: not an error, the event waits.
	rep, err := events.DeliverEvents(ctx, db.Pool, "", events.DeliverOptions{})
	if err != nil || !rep.NoWebhook {
		t.Fatalf("no webhook: %+v %v", rep, err)
	}
	hook := newSlackHook(t)
	hook.failNext.Store(1)
	rep, err = events.DeliverEvents(ctx, db.Pool, hook.URL, events.DeliverOptions{})
	if err != nil || rep.Failed != 1 || rep.Delivered != 0 {
		t.Fatalf("failing webhook: %+v %v", rep, err)
	}
	pending, err := store.Events(ctx, db.Pool, 10, true)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending events = %d (%v), want 1: a failed post is never lost", len(pending), err)
	}
	ev := pending[0]
	if ev.Attempts != 1 || time.Until(ev.NextAttemptAt) < 20*time.Second || strings.Contains(ev.LastError, hook.URL) {
		t.Fatalf("after a failure: attempts=%d next in %s error=%q", ev.Attempts, time.Until(ev.NextAttemptAt), ev.LastError)
	}
	// Not due yet: an immediate run posts nothing.
	if rep, _ := events.DeliverEvents(ctx, db.Pool, hook.URL, events.DeliverOptions{}); rep.Delivered != 0 {
		t.Fatalf("delivered before the backoff ran out: %+v", rep)
	}
	if _, err := db.Pool.Exec(ctx, "UPDATE events SET next_attempt_at = now()"); err != nil {
		t.Fatal(err)
	}
	rep, err = events.DeliverEvents(ctx, db.Pool, hook.URL, events.DeliverOptions{})
	if err != nil || rep.Delivered != 1 {
		t.Fatalf("retry: %+v %v", rep, err)
	}
	if n := len(hook.texts()); n != 1 {
		t.Fatalf("slack got %d messages, want 1", n)
	}
}

// Issue 16: `events deliver` is a bounded tick like the others: past
// StopClaimingAt it claims no further batch and leaves the rest pending.
func TestEventsDeliverStopsClaimingAtItsBound(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ws := newWorkspace(t, db.Pool, "acme")
	for _, p := range []string{"hunter", "findymail", "millionverifier"} {
		if _, err := guard.OpenBreaker(ctx, db.Pool, ws, p, time.Hour, "manual"); err != nil {
			t.Fatal(err)
		}
	}
	before, err := store.Events(ctx, db.Pool, 10, true)
	if err != nil || len(before) < 3 {
		t.Fatalf("pending events = %d (%v), want at least 3", len(before), err)
	}
	hook := newSlackHook(t)
	rep, err := events.DeliverEvents(ctx, db.Pool, hook.URL, events.DeliverOptions{Batch: 1, StopClaimingAt: time.Now()})
	if err != nil || rep.Delivered != 1 {
		t.Fatalf("bounded run: %+v %v, want exactly one batch of 1 delivered", rep, err)
	}
	after, err := store.Events(ctx, db.Pool, 10, true)
	if err != nil || len(after) != len(before)-1 {
		t.Fatalf("pending after a bounded run = %d (%v), want %d", len(after), err, len(before)-1)
	}
}
