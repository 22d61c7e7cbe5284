package providerhttp

import (
	"errors"
	"fmt"

	"github.com/rindactl/rindactl/internal/redact"
)

// LeaksSecret reports whether secret appears, in any form redact hides
// (literal, URL-encoded, JSON-escaped, base64), in the text of err or of
// any error it wraps.
func LeaksSecret(err error, secret string) bool {
	if secret == "" {
		return false
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if redact.Contains(e.Error(), secret) || redact.Contains(fmt.Sprintf("%+v", e), secret) {
			return true
		}
	}
	return false
}
