package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/retryafter"
)

// SlackWebhookEnv names the Slack incoming webhook. The URL is a secret:
// whoever has it can post to the channel, so it is never printed.
const SlackWebhookEnv = "RINDA_SLACK_WEBHOOK_URL"

// Outbox event kinds. The guard writes the provider kinds with its breaker
// changes; the email and inbox ticks write the mailbox kinds (the inbox
// tick also inbox_suspicious); the SQL that writes ceiling_reached and
// breaker_closed uses the same words.
const (
	KindQuotaExhausted  = "quota_exhausted"
	KindBreakerOpened   = "breaker_opened"
	KindBreakerClosed   = "breaker_closed"
	KindCeilingReached  = "ceiling_reached"
	KindAuthFailed      = "provider_auth_failed"
	KindMailboxPaused   = "mailbox_paused"
	KindMailboxDisabled = "mailbox_disabled"
	// KindInboxSuspicious: a delivery report naming more than a handful of
	// addresses the mailbox never mailed was ignored.
	KindInboxSuspicious = "inbox_suspicious"
	// KindCreditsLow is written by package credits, once per episode of a
	// provider account's runway under its alert threshold.
	KindCreditsLow = "credits_low"
	// KindMailboxAuthRevoked: an oauth2 mailbox's grant was refused
	// (invalid_grant), once per episode; it waits for `rindactl mailbox
	// authorize`.
	KindMailboxAuthRevoked = "mailbox_auth_revoked"
)

// Event is an outbox event as a message is built from it.
type Event struct {
	Kind      string
	Workspace string
	Provider  string
	Reason    string
	// Until is when the block ends (zero when not applicable).
	Until     time.Time
	Episode   int64
	CreatedAt time.Time
	// Fields are the payload's other values (ceiling_usd, mailbox, ...).
	Fields map[string]any
}

// eventFromPayload reads the well-known payload fields.
func eventFromPayload(kind string, provider *string, payload []byte, created time.Time) Event {
	fields := map[string]any{}
	_ = json.Unmarshal(payload, &fields)
	take := func(k string) string {
		v, ok := fields[k]
		if !ok {
			return ""
		}
		delete(fields, k)
		if s, ok := v.(string); ok {
			return s
		}
		return fmt.Sprint(v)
	}
	e := Event{Kind: kind, Workspace: take("workspace"), Provider: take("provider"), Reason: take("reason"), CreatedAt: created, Fields: fields}
	if e.Provider == "" && provider != nil {
		e.Provider = *provider
	}
	if t, err := time.Parse(time.RFC3339Nano, take("until")); err == nil {
		e.Until = t
	}
	if ep, ok := fields["episode"].(float64); ok {
		e.Episode = int64(ep)
		delete(fields, "episode")
	}
	return e
}

var eventTitles = map[string]string{
	KindQuotaExhausted:     "Provider quota exhausted",
	KindBreakerOpened:      "Provider calls paused (breaker open)",
	KindBreakerClosed:      "Provider calls resumed (breaker closed)",
	KindCeilingReached:     "Monthly USD ceiling reached",
	KindAuthFailed:         "Provider rejected the API key",
	KindMailboxPaused:      "Mailbox paused",
	KindMailboxDisabled:    "Mailbox disabled",
	KindInboxSuspicious:    "Suspicious delivery report ignored",
	KindCreditsLow:         "Provider credits running low",
	KindMailboxAuthRevoked: "Mailbox OAuth2 grant revoked: run 'rindactl mailbox authorize'",
}

// Text is the plain-text line: kind, workspace, provider, reason and
// until-when. Slack shows it in notifications and where blocks cannot be.
func (e Event) Text() string {
	title := eventTitles[e.Kind]
	if title == "" {
		title = e.Kind
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: workspace %s", title, orDash(e.Workspace))
	if e.Provider != "" {
		fmt.Fprintf(&b, ", provider %s", e.Provider)
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, ", reason %s", e.Reason)
	}
	switch {
	case !e.Until.IsZero():
		fmt.Fprintf(&b, "; blocked until %s", e.Until.UTC().Format("2006-01-02 15:04 MST"))
	case e.Kind == KindBreakerClosed:
		b.WriteString("; calls resume now")
	}
	for _, k := range sortedKeys(e.Fields) {
		fmt.Fprintf(&b, ", %s %v", k, e.Fields[k])
	}
	return b.String()
}

// slackMessage is the webhook body: Block Kit blocks plus the text fallback.
func (e Event) slackMessage() ([]byte, error) {
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	title := eventTitles[e.Kind]
	if title == "" {
		title = e.Kind
	}
	until := "—"
	if !e.Until.IsZero() {
		until = e.Until.UTC().Format("2006-01-02 15:04 MST")
	}
	blocks := []map[string]any{
		{"type": "header", "text": text{"plain_text", title}},
		{"type": "section", "fields": []text{
			{"mrkdwn", "*Workspace*\n" + orDash(e.Workspace)},
			{"mrkdwn", "*Provider*\n" + orDash(e.Provider)},
			{"mrkdwn", "*Reason*\n" + orDash(e.Reason)},
			{"mrkdwn", "*Until*\n" + until},
		}},
		{"type": "context", "elements": []text{{"mrkdwn", fmt.Sprintf("`%s` · episode %d · %s · rindactl",
			e.Kind, e.Episode, e.CreatedAt.UTC().Format(time.RFC3339))}}},
	}
	return json.Marshal(map[string]any{"text": e.Text(), "blocks": blocks})
}

// webhookError is a failed post, without the URL.
type webhookError struct {
	Status     int
	RetryAfter time.Duration
	Msg        string
}

func (e *webhookError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("slack webhook answered HTTP %d: %s", e.Status, e.Msg)
	}
	return "slack webhook: " + e.Msg
}

// postSlack posts body to the webhook. Slack answers 200 "ok"; anything
// else is a failure to retry later. Errors never contain the URL.
func postSlack(ctx context.Context, client *http.Client, webhookURL string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, webhookURL, bytes.NewReader(body))
	if err != nil {
		return &webhookError{Msg: "invalid " + SlackWebhookEnv + " (expected https://hooks.slack.com/services/...)"}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return &webhookError{Msg: transportReason(err)}
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	werr := &webhookError{Status: resp.StatusCode, Msg: strings.TrimSpace(string(text))}
	if d, ok := retryafter.Parse(resp.Header.Get("Retry-After"), time.Now()); ok {
		werr.RetryAfter = d
	}
	return werr
}

// transportReason describes a transport failure without the request URL,
// which *url.Error would print.
func transportReason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		msg := ue.Unwrap().Error()
		if !strings.Contains(msg, "://") {
			return msg
		}
	}
	return "request failed"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
