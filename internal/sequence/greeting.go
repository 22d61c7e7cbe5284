package sequence

import (
	"context"
	"net"
	"os"
	"regexp"
	"strings"
	"time"
)

// The SMTP greeting name (the argument of EHLO/HELO). Mail servers that
// enforce RFC 5321 (Postfix's reject_non_fqdn_helo_hostname, most
// submission services) refuse a bare host name such as a pod's or a VM's
// "vm": 504 5.5.2 Helo command rejected. The name is, in order: the
// mailbox's own helo (campaign file), RINDA_SMTP_HELO, the host's fully
// qualified name when it has one, else an address literal of the
// connection's local address ("[192.0.2.10]", RFC 5321 4.1.3). Never a
// bare label.

// HELOEnv names the variable with the greeting name of every mailbox
// without its own helo.
const HELOEnv = "RINDA_SMTP_HELO"

// fqdnLookupTimeout bounds resolving the host's name: a greeting name is
// not worth a hung tick, and the address literal is always there.
const fqdnLookupTimeout = 2 * time.Second

var hostLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// ValidGreetingName reports whether name may be announced in EHLO/HELO: a
// fully qualified domain name (two labels or more) or an address literal
// ("[192.0.2.1]", "[IPv6:2001:db8::1]").
func ValidGreetingName(name string) bool {
	if inner, ok := strings.CutPrefix(name, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok {
			return false
		}
		if v6, isV6 := strings.CutPrefix(inner, "IPv6:"); isV6 {
			ip := net.ParseIP(v6)
			return ip != nil && strings.Contains(v6, ":")
		}
		ip := net.ParseIP(inner)
		return ip != nil && ip.To4() != nil && !strings.Contains(inner, ":")
	}
	return isFQDN(name)
}

// isFQDN: two or more host labels, at most 253 characters, not localhost.
func isFQDN(name string) bool {
	name = strings.TrimSuffix(name, ".")
	if len(name) > 253 || !strings.Contains(name, ".") || strings.HasPrefix(strings.ToLower(name), "localhost.") {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if !hostLabel.MatchString(label) {
			return false
		}
	}
	// A name of digits and dots is an address, which needs brackets.
	return net.ParseIP(name) == nil
}

// addressLiteral is the RFC 5321 address literal of a connection's local
// address: [192.0.2.10] or [IPv6:2001:db8::1].
func addressLiteral(local net.Addr) string {
	var ip net.IP
	switch a := local.(type) {
	case *net.TCPAddr:
		ip = a.IP
	default:
		if host, _, err := net.SplitHostPort(local.String()); err == nil {
			ip = net.ParseIP(host)
		}
	}
	if v4 := ip.To4(); v4 != nil {
		return "[" + v4.String() + "]"
	}
	if ip != nil {
		return "[IPv6:" + ip.String() + "]"
	}
	return "[127.0.0.1]"
}

// HostFQDN is this host's fully qualified name, or "" when it has none: the
// host name when it is qualified, else the canonical name the resolver
// (/etc/hosts, DNS) gives it.
func HostFQDN() string {
	return hostFQDN(os.Hostname, func(ctx context.Context, host string) (string, error) {
		return net.DefaultResolver.LookupCNAME(ctx, host)
	})
}

func hostFQDN(hostname func() (string, error), canonical func(context.Context, string) (string, error)) string {
	name, err := hostname()
	if err != nil || name == "" {
		return ""
	}
	if isFQDN(name) {
		return strings.TrimSuffix(name, ".")
	}
	ctx, cancel := context.WithTimeout(context.Background(), fqdnLookupTimeout)
	defer cancel()
	if cname, err := canonical(ctx, name); err == nil && isFQDN(cname) {
		return strings.TrimSuffix(cname, ".")
	}
	return ""
}
