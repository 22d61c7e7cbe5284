package unsubscribe

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/rindactl/rindactl/internal/redact"
)

// BaseURLEnv names the environment variable holding the address of
// `rindactl unsubscribe serve` as recipients reach it (through a reverse
// proxy or an Ingress that terminates TLS). The email tick reads it.
const BaseURLEnv = "RINDA_UNSUBSCRIBE_BASE_URL"

// ParseBaseURL checks a base URL: https (RFC 8058 one-click needs it),
// or http on a loopback host (tests, a local proxy), with no query or
// fragment. It returns it without a trailing slash. Its errors quote raw
// without a password it may hold (user:password@, token=).
func ParseBaseURL(raw string) (string, error) {
	shown := redact.String(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("%s=%q is not a URL like https://unsubscribe.example.com", BaseURLEnv, shown)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return "", fmt.Errorf("%s=%q: use https (one-click unsubscribe requires it; http is accepted only on a loopback host)", BaseURLEnv, shown)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%s=%q: use a URL without user, query or fragment", BaseURLEnv, shown)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the one-click URL of token under base (from ParseBaseURL): the
// token is the last path segment, so the server works behind a proxy at
// any prefix.
func URL(base, token string) string { return base + "/" + token }
