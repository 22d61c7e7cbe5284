// Package providertest runs in-process stand-ins for Hunter, Findymail and
// MillionVerifier that speak their wire formats, real error bodies and
// headers included. They are plain httptest servers with no dependency on
// package testing, so the demo can run them too. Every control is safe for
// concurrent use and takes effect on the next request.
package providertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
	"github.com/rindactl/rindactl/internal/enrich/provider/hunter"
	"github.com/rindactl/rindactl/internal/enrich/provider/millionverifier"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// Mode is how a stand-in answers.
type Mode string

const (
	// ModeHealthy answers from the directory (and QuotaAfter, if set).
	ModeHealthy Mode = "healthy"
	// ModeQuotaExhausted gives the provider's real quota answer: Hunter 429
	// too_many_requests, Findymail 402 "Not enough credits", MillionVerifier
	// 200 with resultcode 4 "Insufficient credits".
	ModeQuotaExhausted Mode = "quota_exhausted"
	// ModeQuota429 is the incident's answer: 429, no Retry-After, a body
	// about the plan's credit limit (Findymail). Other providers answer as
	// ModeQuotaExhausted.
	ModeQuota429 Mode = "quota_429"
	// ModeRateLimited gives the provider's throttling answer with the
	// Retry-After set by SetRetryAfter: Hunter 403, others 429.
	ModeRateLimited Mode = "rate_limited"
	// ModeServerError answers 502 with an HTML page, as a proxy does.
	ModeServerError Mode = "server_error"
	// ModeSlow holds every request for SlowDelay or until the client leaves.
	ModeSlow Mode = "slow"
	// ModeMalformed answers 200 with JSON cut in the middle.
	ModeMalformed Mode = "malformed"
	// ModeHugeBody answers 200 with a JSON document over 2 MiB.
	ModeHugeBody Mode = "huge_body"
	// ModeTruncated announces a longer body than it sends.
	ModeTruncated Mode = "truncated"
	// ModeRedirect redirects to another host (see RedirectHits).
	ModeRedirect Mode = "redirect"
	// ModeAuthEcho refuses the key with a 401 whose JSON body repeats it
	// in every spelling of redacttest.Spellings (issue 37).
	ModeAuthEcho Mode = "auth_echo"
	// ModeRedirectEcho redirects to another host with the key in the
	// Location, percent-encoded every way and in base64url (issue 37).
	ModeRedirectEcho Mode = "redirect_echo"
)

// SlowDelayDefault is how long ModeSlow holds a request.
const SlowDelayDefault = 30 * time.Second

// holdLimit bounds how long HoldAfter holds a request whose client never
// leaves; Close releases it sooner.
const holdLimit = 10 * time.Minute

// Directory decides who is findable: the address for a lead, or false for a
// clean miss.
type Directory func(first, last, domain string) (email string, found bool)

// Verdicts decides MillionVerifier's verdict for an address.
type Verdicts func(email string) enrich.Verdict

// Request is one request a stand-in received.
type Request struct {
	At       time.Time
	Provider string
	// Key is the API key the request carried: workspaces with their own keys
	// can be told apart by it.
	Key                 string
	FirstName, LastName string
	Domain, Email       string
}

// Server is one provider's stand-in.
type Server struct {
	provider  string
	ts        *httptest.Server
	elsewhere *httptest.Server
	closing   chan struct{}
	closeOnce sync.Once

	mu           sync.Mutex
	mode         Mode
	retryAfter   string
	latency      time.Duration
	slowDelay    time.Duration
	quotaAfter   int
	served       int
	holdAfter    int
	held         int
	directory    Directory
	verdicts     Verdicts
	keys         map[string]bool
	requests     []Request
	redirectHits int
	// Credits per API key: what each key has left (creditsDefault until
	// set), what it has been billed, and how often the account endpoint
	// was read.
	creditsDefault int
	balance        map[string]int
	used           map[string]int
	creditReads    int
	creditReadsAt  []time.Time
}

// CreditsDefault is what a key has before SetCredits says otherwise.
const CreditsDefault = 1_000_000

// NewHunter starts a Hunter stand-in.
func NewHunter() *Server { return Start(hunter.Name) }

// NewFindymail starts a Findymail stand-in.
func NewFindymail() *Server { return Start(findymail.Name) }

// NewMillionVerifier starts a MillionVerifier stand-in.
func NewMillionVerifier() *Server { return Start(millionverifier.Name) }

// Start starts a stand-in for the named provider, speaking the dialect of
// its Descriptor's StandIn, so a new provider needs nothing added here.
func Start(name string) *Server {
	if _, ok := provider.Lookup(name); !ok {
		panic("providertest: no descriptor for provider " + name)
	}
	s := &Server{
		provider:       name,
		closing:        make(chan struct{}),
		mode:           ModeHealthy,
		slowDelay:      SlowDelayDefault,
		quotaAfter:     -1,
		holdAfter:      -1,
		directory:      DefaultDirectory,
		creditsDefault: CreditsDefault,
		balance:        map[string]int{},
		used:           map[string]int{},
		verdicts:       func(string) enrich.Verdict { return enrich.VerdictOK },
	}
	s.elsewhere = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.redirectHits++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":{"email":"leaked@elsewhere.test","score":100}}`))
	}))
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Provider is the provider this server stands in for.
func (s *Server) Provider() string { return s.provider }

// URL is the base URL (scheme and host) for RINDA_<PROVIDER>_BASE_URL.
func (s *Server) URL() string { return s.ts.URL }

// Env returns the environment that points the adapter at this server with
// key: RINDA_<PROVIDER>_BASE_URL and RINDA_<PROVIDER>_API_KEY.
func (s *Server) Env(key string) map[string]string {
	return map[string]string{
		providerhttp.BaseURLEnv(s.provider): s.ts.URL,
		providerhttp.KeyEnv(s.provider):     key,
	}
}

// Close stops the server, releasing held (slow) requests first.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	s.ts.Close()
	s.elsewhere.Close()
}

// SetMode switches how the server answers.
func (s *Server) SetMode(m Mode) { s.locked(func() { s.mode = m }) }

// SetRetryAfter sets the Retry-After value ModeRateLimited sends, in either
// form ("30" or an HTTP-date); "" sends none.
func (s *Server) SetRetryAfter(v string) { s.locked(func() { s.retryAfter = v }) }

// RateLimit switches to ModeRateLimited with the given Retry-After.
func (s *Server) RateLimit(retryAfter string) {
	s.locked(func() { s.mode, s.retryAfter = ModeRateLimited, retryAfter })
}

// SetLatency delays every answer by d.
func (s *Server) SetLatency(d time.Duration) { s.locked(func() { s.latency = d }) }

// SetSlowDelay sets how long ModeSlow holds a request.
func (s *Server) SetSlowDelay(d time.Duration) { s.locked(func() { s.slowDelay = d }) }

// QuotaAfter makes a healthy server answer with its quota error once n
// calls have been answered normally (found or missed); n < 0 disables.
// Until then the account endpoint reports the answers left as credits.
func (s *Server) QuotaAfter(n int) { s.locked(func() { s.quotaAfter, s.served = n, 0 }) }

// HoldAfter makes the server answer the first n requests from now as
// usual and hold every later one until its client leaves (or the server
// closes), answering nothing: a provider that hangs once a tick has seen
// it answer and fanned out. n < 0 disables. Held counts the requests held.
func (s *Server) HoldAfter(n int) {
	s.locked(func() {
		s.holdAfter = -1
		if n >= 0 {
			s.holdAfter = len(s.requests) + n
		}
	})
}

// Held is the number of requests being held now (HoldAfter).
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// SetDirectory replaces who is findable (finders only).
func (s *Server) SetDirectory(d Directory) { s.locked(func() { s.directory = d }) }

// SetVerdicts replaces the verdict rule (MillionVerifier only).
func (s *Server) SetVerdicts(v Verdicts) { s.locked(func() { s.verdicts = v }) }

// SetKeys restricts the accepted API keys; with none set any non-empty key
// is accepted. Other keys get the provider's real authentication error.
func (s *Server) SetKeys(keys ...string) {
	s.locked(func() {
		s.keys = make(map[string]bool, len(keys))
		for _, k := range keys {
			s.keys[k] = true
		}
	})
}

// Reset forgets recorded requests and the QuotaAfter count.
func (s *Server) Reset() {
	s.locked(func() { s.requests, s.served, s.redirectHits = nil, 0, 0 })
}

// Requests returns a copy of every request received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count is the number of requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// CountKey is the number of requests that carried key.
func (s *Server) CountKey(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if r.Key == key {
			n++
		}
	}
	return n
}

// MaxInWindow is the largest number of requests that arrived within any
// window of length d: a token bucket of rate r and burst b must keep it at
// or below b + r·d.
func (s *Server) MaxInWindow(d time.Duration) int {
	reqs := s.Requests()
	best, lo := 0, 0
	for hi := range reqs {
		for reqs[hi].At.Sub(reqs[lo].At) >= d {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// RedirectHits counts requests that followed a ModeRedirect answer to the
// other host: a client that keeps the key at home leaves it at zero.
func (s *Server) RedirectHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.redirectHits
}

func (s *Server) locked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// wait sleeps d unless the client leaves or the server closes first.
func (s *Server) wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.closing:
	}
}

// SetCredits gives key n credits left. Each billed answer (a found
// address; for a provider that bills misses, every answer) takes one; at 0
// the key gets the provider's quota answer, and the account endpoint
// reports what is left.
func (s *Server) SetCredits(key string, n int) { s.locked(func() { s.balance[key] = n }) }

// SetCreditsDefault gives every key not set by SetCredits n credits.
func (s *Server) SetCreditsDefault(n int) { s.locked(func() { s.creditsDefault = n }) }

// Credits is what key has left.
func (s *Server) Credits(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.remaining(key)
}

// CreditReads counts the requests to the account (credits) endpoint.
func (s *Server) CreditReads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creditReads
}

// CreditReadsAt is when each request to the account endpoint arrived.
func (s *Server) CreditReadsAt() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.creditReadsAt)
}

// remaining is key's balance, or what QuotaAfter still allows when that
// is less; the caller holds mu.
func (s *Server) remaining(key string) int {
	n, ok := s.balance[key]
	if !ok {
		n = s.creditsDefault
	}
	if s.quotaAfter >= 0 {
		n = min(n, s.quotaAfter-s.served)
	}
	return n
}

// bill takes one credit from key.
func (s *Server) bill(key string) {
	s.locked(func() {
		n, ok := s.balance[key]
		if !ok {
			n = s.creditsDefault
		}
		s.balance[key] = n - 1
		s.used[key]++
	})
}
