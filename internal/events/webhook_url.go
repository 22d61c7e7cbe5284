package events

import (
	"fmt"
	"net"
	"net/url"
)

// CheckWebhookURL says whether raw ("": unset, events stay pending) can be
// the Slack webhook: an absolute https URL, http only on a loopback host
// (a local relay, the tests' stand-ins). Every tick checks it at its start
// (a URL that can never be posted to would hold every alert back
// silently), and doctor with it. The error shows the scheme and host
// only: the path is the webhook's secret.
func CheckWebhookURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%s is not a URL like https://hooks.slack.com/services/...", SlackWebhookEnv)
	}
	shown := u.Scheme + "://" + u.Host
	switch {
	case u.User != nil:
		return fmt.Errorf("%s (%s) must not carry a user or password", SlackWebhookEnv, u.Scheme+"://"+u.Hostname())
	case u.Scheme == "https":
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
	default:
		return fmt.Errorf("%s (%s...): use https (http is accepted only on a loopback host)", SlackWebhookEnv, shown)
	}
	return nil
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
