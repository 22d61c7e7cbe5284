package unsubscribe

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiterTableMax bounds how many client IPs the limiter tracks at once.
// Past it, IPs whose bucket is full again are dropped (a fresh bucket is
// the same), and if that frees nothing, unknown IPs share one bucket.
const limiterTableMax = 10000

// IPLimiter is a token bucket per client IP (golang.org/x/time/rate). The
// server is one process, so the buckets live in memory.
type IPLimiter struct {
	rate  rate.Limit
	burst int
	// ForwardedFor: the client is the last X-Forwarded-For address (the
	// one the proxy in front added), not the peer. Set only behind a proxy
	// that adds it, or clients choose their own bucket.
	forwardedFor bool
	now          func() time.Time

	mu       sync.Mutex
	buckets  map[string]*rate.Limiter
	overflow *rate.Limiter
}

// NewIPLimiter allows each client IP perSecond requests on average and
// burst at once. now is the clock (nil: time.Now).
func NewIPLimiter(perSecond float64, burst int, forwardedFor bool, now func() time.Time) *IPLimiter {
	if now == nil {
		now = time.Now
	}
	return &IPLimiter{
		rate: rate.Limit(perSecond), burst: burst, forwardedFor: forwardedFor, now: now,
		buckets:  map[string]*rate.Limiter{},
		overflow: rate.NewLimiter(rate.Limit(perSecond), burst),
	}
}

// Allow takes a token from r's client's bucket; when there is none it says
// how long until there is.
func (l *IPLimiter) Allow(r *http.Request) (bool, time.Duration) {
	now := l.now()
	lim := l.bucket(l.clientIP(r), now)
	res := lim.ReserveN(now, 1)
	if !res.OK() {
		return false, time.Minute
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}

func (l *IPLimiter) bucket(ip string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[ip]; ok {
		return b
	}
	if len(l.buckets) >= limiterTableMax {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(l.burst) {
				delete(l.buckets, k)
			}
		}
		if len(l.buckets) >= limiterTableMax {
			return l.overflow
		}
	}
	b := rate.NewLimiter(l.rate, l.burst)
	l.buckets[ip] = b
	return b
}

func (l *IPLimiter) clientIP(r *http.Request) string {
	if l.forwardedFor {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			last := xff[len(xff)-1]
			last = strings.TrimSpace(last[strings.LastIndexByte(last, ',')+1:])
			if ip := net.ParseIP(last); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
