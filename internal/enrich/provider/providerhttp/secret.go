package providerhttp

import (
	"errors"
	"fmt"
	"strings"
)

// LeaksSecret reports whether secret appears in the text of err or of any
// error it wraps.
func LeaksSecret(err error, secret string) bool {
	if secret == "" {
		return false
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), secret) || strings.Contains(fmt.Sprintf("%+v", e), secret) {
			return true
		}
	}
	return false
}
