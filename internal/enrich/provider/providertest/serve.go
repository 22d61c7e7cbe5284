package providertest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/redact/redacttest"
)

// standIn is the provider's wire dialect, from its descriptor.
func (s *Server) standIn() providerspec.StandIn {
	d, _ := provider.Lookup(s.provider)
	return d.StandIn
}

// directory gives a stand-in this server's data, and bills key for what
// the provider bills.
type directory struct {
	s   *Server
	key string
}

func (d directory) Find(first, last, domain string) (string, bool) {
	email, found := d.s.find(first, last, domain)
	if found || d.s.billsMisses() {
		d.s.bill(d.key)
	}
	return email, found
}

func (d directory) Verdict(email string) enrich.Verdict {
	d.s.mu.Lock()
	v := d.s.verdicts(email)
	d.s.mu.Unlock()
	d.s.bill(d.key) // every verdict costs a credit
	return v
}

func (d directory) Credits() int { return d.s.Credits(d.key) }

// billsMisses reports whether the provider bills an answer without a
// result, from its descriptor.
func (s *Server) billsMisses() bool {
	d, _ := provider.Lookup(s.provider)
	return d.Limits.BillMisses
}

// serveCredits answers the free account endpoint: what the key has left
// and has been billed. It is not a request of Requests.
func (s *Server) serveCredits(w http.ResponseWriter, r *http.Request, wr providerspec.StandIn) {
	l := wr.Read(r)
	s.mu.Lock()
	s.creditReads++
	s.creditReadsAt = append(s.creditReadsAt, time.Now())
	mode, keys, left, used := s.mode, s.keys, s.remaining(l.Key), s.used[l.Key]
	s.mu.Unlock()
	switch {
	case mode == ModeServerError:
		writeHTML(w, http.StatusBadGateway, "502 Bad Gateway")
	case l.Key == "" || (keys != nil && !keys[l.Key]):
		wr.Unauthorized(w, l)
	default:
		wr.Credits(w, l, max(left, 0), used)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	wr := s.standIn()
	if wr.CreditsRoute(r) {
		s.serveCredits(w, r, wr)
		return
	}
	if !wr.Route(r) {
		writeHTML(w, http.StatusNotFound, "404 Not Found")
		return
	}
	l := wr.Read(r)
	req := Request{At: time.Now(), Provider: s.provider, Key: l.Key, FirstName: l.FirstName, LastName: l.LastName, Domain: l.Domain, Email: l.Email}

	mode, held := s.record(r, req)
	if held {
		return
	}
	if s.serveBroken(w, r, mode.mode) {
		return
	}
	switch {
	case req.Key == "" || (mode.keys != nil && !mode.keys[req.Key]):
		wr.Unauthorized(w, l)
	case mode.mode == ModeQuotaExhausted || mode.mode == ModeQuota429:
		wr.Quota(w, l, mode.mode == ModeQuota429)
	case mode.mode == ModeRateLimited:
		wr.RateLimited(w, mode.retryAfter)
	case wr.Invalid(w, l):
	case s.Credits(l.Key) <= 0 || !s.serveWithinQuota():
		wr.Quota(w, l, false)
	default:
		wr.Answer(w, l, directory{s, l.Key})
	}
}

// serving is what a request is answered by: the server's mode and keys
// when it arrived.
type serving struct {
	mode       Mode
	retryAfter string
	keys       map[string]bool
}

// record counts the request and waits as the server is told to: its
// latency (and a slow mode's delay), or past HoldAfter until the client
// gives up (held: nothing more is answered).
func (s *Server) record(r *http.Request, req Request) (serving, bool) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	mode := serving{s.mode, s.retryAfter, s.keys}
	latency, slowDelay := s.latency, s.slowDelay
	hold := s.holdAfter >= 0 && len(s.requests) > s.holdAfter
	if hold {
		s.held++
	}
	s.mu.Unlock()
	if hold {
		s.wait(r.Context(), holdLimit)
		s.locked(func() { s.held-- })
		return mode, true
	}
	s.wait(r.Context(), latency)
	if mode.mode == ModeSlow {
		s.wait(r.Context(), slowDelay)
	}
	return mode, false
}

// serveBroken answers as a broken provider or the network in front of it
// does in mode, whatever the request: a gateway error, a cut or huge body,
// a redirect. false: mode is not one of those.
func (s *Server) serveBroken(w http.ResponseWriter, r *http.Request, mode Mode) bool {
	switch mode {
	case ModeServerError:
		writeHTML(w, http.StatusBadGateway, "502 Bad Gateway")
	case ModeMalformed:
		providerspec.WriteRaw(w, http.StatusOK, "application/json", `{"data":{"email":"jo`)
	case ModeHugeBody:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprintf(w, `{"data":{"email":null,"pad":"%s"}}`, strings.Repeat("x", 2<<20))
	case ModeTruncated:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "4096")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"data":{"email":"trunc`))
	case ModeRedirect:
		http.Redirect(w, r, s.elsewhere.URL+r.URL.RequestURI(), http.StatusFound)
	case ModeAuthEcho:
		echo := "No user found for the API key supplied: " + strings.Join(spellings(s.standIn().Read(r).Key), ", ")
		body, _ := json.Marshal(map[string]any{"errors": []map[string]any{{"id": "authentication_failed", "code": 401, "details": echo}},
			"message": echo, "error": echo})
		providerspec.WriteRaw(w, http.StatusUnauthorized, "application/json", string(body))
	case ModeRedirectEcho:
		sp := redacttest.Spellings("", s.standIn().Read(r).Key)
		w.Header().Set("Location", s.elsewhere.URL+"/login/"+sp["percent, every byte"]+"/"+sp["percent, lower hex"]+"/"+sp["percent, path"]+
			"?next="+sp["percent, query"]+"&t="+sp["base64url, unpadded"])
		w.WriteHeader(http.StatusFound)
	default:
		return false
	}
	return true
}

// spellings are key's spellings, in a fixed order.
func spellings(key string) []string {
	sp := redacttest.Spellings("", key)
	out := make([]string, 0, len(sp))
	for _, name := range slices.Sorted(maps.Keys(sp)) {
		out = append(out, sp[name])
	}
	return out
}

// serveWithinQuota counts a normal answer, or reports that QuotaAfter's
// allowance is used up.
func (s *Server) serveWithinQuota() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quotaAfter >= 0 && s.served >= s.quotaAfter {
		return false
	}
	s.served++
	return true
}

func (s *Server) find(first, last, domain string) (string, bool) {
	s.mu.Lock()
	d := s.directory
	s.mu.Unlock()
	return d(first, last, domain)
}

// DefaultDirectory finds first.last@domain (lower-case, letters and digits
// only) except for one lead in five, chosen by a hash of the name and
// domain, which is a clean miss. It is deterministic so tests can predict it.
func DefaultDirectory(first, last, domain string) (string, bool) {
	if IsDefaultMiss(first, last, domain) {
		return "", false
	}
	local := strings.Trim(clean(first)+"."+clean(last), ".")
	if local == "" || domain == "" {
		return "", false
	}
	return local + "@" + strings.ToLower(domain), true
}

// IsDefaultMiss reports whether DefaultDirectory misses this lead.
func IsDefaultMiss(first, last, domain string) bool {
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(first + "|" + last + "|" + domain)))
	return h.Sum32()%5 == 0
}

func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

func writeHTML(w http.ResponseWriter, status int, title string) {
	providerspec.WriteRaw(w, status, "text/html; charset=utf-8", "<html>\r\n<head><title>"+title+"</title></head>\r\n<body>\r\n<center><h1>"+title+
		"</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
}
