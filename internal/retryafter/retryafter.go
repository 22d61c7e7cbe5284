// Package retryafter reads the HTTP Retry-After header, which provider
// adapters and the Slack delivery both honour. It imports nothing of the
// project, so neither has to import the other's domain for it.
package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse reads an RFC 9110 Retry-After value: delta-seconds or an
// HTTP-date. ok is false for an empty or unparseable value. A date in the
// past yields 0 with ok true.
func Parse(value string, now time.Time) (d time.Duration, ok bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(value, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		// Cap absurd values so the arithmetic cannot overflow.
		const maxSecs = int64(365 * 24 * 3600)
		if secs > maxSecs {
			secs = maxSecs
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d.Round(time.Second), true
	}
	return 0, true
}
