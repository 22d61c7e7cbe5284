package providerhttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/rindactl/rindactl/internal/retryafter"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/redact"
)

// maxTextLen caps provider-supplied text copied into errors and logs.
const maxTextLen = 200

// Error builds the domain error for this provider. resp may be nil when no
// answer arrived; err is an optional cause that must already be secret-free.
func (c *Client) Error(kind enrich.ErrorKind, resp *Response, msg string, err error) *enrich.ProviderError {
	pe := &enrich.ProviderError{Provider: c.cfg.Provider, Kind: kind, Message: c.redact(msg), Err: err}
	if resp != nil {
		pe.Status = resp.Status
	}
	return pe
}

// RateLimited builds a throttling error from the answer's Retry-After,
// which enrich.RateLimited lifts to quota exhaustion when it is long.
func (c *Client) RateLimited(resp *Response, msg string) *enrich.ProviderError {
	d, _ := c.RetryAfter(resp)
	return enrich.RateLimited(c.cfg.Provider, resp.Status, d, c.redact(msg))
}

// RetryAfter reads the answer's Retry-After header in either RFC 9110 form.
func (c *Client) RetryAfter(resp *Response) (d time.Duration, ok bool) {
	if resp == nil || resp.Header == nil {
		return 0, false
	}
	return retryafter.Parse(resp.Header.Get("Retry-After"), c.cfg.Now())
}

// Unexpected classifies what no adapter rule covers: 401 is a rejected key,
// 5xx and anything unknown are transient unavailability (bounded by the
// tick's max attempts, so an odd status can never loop).
func (c *Client) Unexpected(resp *Response, msg string) *enrich.ProviderError {
	if msg == "" {
		msg = "unexpected answer"
	}
	switch {
	case resp.Status == http.StatusUnauthorized:
		return c.Error(enrich.KindAuth, resp, msg+"; check "+KeyEnv(c.cfg.Provider), nil)
	case resp.Status >= 500:
		pe := c.Error(enrich.KindUnavailable, resp, msg, nil)
		pe.RetryAfter, _ = c.RetryAfter(resp)
		return pe
	}
	return c.Error(enrich.KindUnavailable, resp, msg, nil)
}

// DecodeJSON decodes a JSON answer into v. A body that is not JSON (an HTML
// error page from a proxy, a truncated document) is a transient
// unavailability, reported with its status and content type.
func (c *Client) DecodeJSON(resp *Response, v any) *enrich.ProviderError {
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return c.Malformed(resp, err)
	}
	return nil
}

// Malformed reports an answer the adapter cannot read.
func (c *Client) Malformed(resp *Response, err error) *enrich.ProviderError {
	what := "malformed response body"
	if mt, _, perr := mime.ParseMediaType(resp.Header.Get("Content-Type")); perr == nil && mt != "application/json" {
		what = fmt.Sprintf("non-JSON response body (%s)", mt)
	} else if looksLikeHTML(resp.Body) {
		what = "HTML response body"
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	cause := errors.New("undecodable body")
	switch {
	case errors.As(err, &syn), errors.As(err, &typ):
		cause = err // these texts name offsets and Go types, never body content
	}
	pe := c.Error(enrich.KindUnavailable, resp, what, cause)
	pe.RetryAfter, _ = c.RetryAfter(resp)
	return pe
}

func looksLikeHTML(body []byte) bool {
	s := strings.ToLower(strings.TrimSpace(string(body[:min(len(body), 64)])))
	return strings.HasPrefix(s, "<!doctype html") || strings.HasPrefix(s, "<html")
}

// Text makes provider-supplied text safe for errors and logs: the key
// removed (a hostile provider may echo it), control characters (CR/LF log
// injection) replaced, length capped.
func (c *Client) Text(s string) string {
	s = c.redact(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > maxTextLen {
		s = strings.ToValidUTF8(s[:maxTextLen], "") + "…"
	}
	return s
}

// redact hides the key in every form a provider may echo it in (the
// URL-encoded form of a key with /+= above all), and any other credential.
func (c *Client) redact(s string) string { return redact.String(s, c.cfg.APIKey) }

// redacted carries a cause whose text had the key removed; Unwrap keeps
// errors.Is working on the original (net.Error timeouts and the like).
type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }
