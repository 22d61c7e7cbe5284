package demo

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// slackHook stands in for a Slack incoming webhook: it answers as Slack
// does (200, text/plain "ok") and keeps every message's fallback text.
type slackHook struct {
	ts *httptest.Server

	mu    sync.Mutex
	posts []string
}

func newSlackHook() *slackHook {
	h := &slackHook{}
	h.ts = httptest.NewServer(http.HandlerFunc(h.serve))
	return h
}

func (h *slackHook) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	var msg struct {
		Text string `json:"text"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(body, &msg); err != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.posts = append(h.posts, msg.Text)
	h.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, "ok")
}

// URL is the webhook URL for RINDA_SLACK_WEBHOOK_URL.
func (h *slackHook) URL() string { return h.ts.URL + "/services/T000DEMO/B000DEMO/demo" }

// Posts returns the text of every message received, in order.
func (h *slackHook) Posts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.posts...)
}

func (h *slackHook) Close() { h.ts.Close() }
