package providertest

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

// standIn is the provider's wire dialect, from its descriptor.
func (s *Server) standIn() providerspec.StandIn {
	d, _ := provider.Lookup(s.provider)
	return d.StandIn
}

// directory gives a stand-in this server's data.
type directory struct{ s *Server }

func (d directory) Find(first, last, domain string) (string, bool) {
	return d.s.find(first, last, domain)
}

func (d directory) Verdict(email string) enrich.Verdict {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	return d.s.verdicts(email)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	wr := s.standIn()
	if !wr.Route(r) {
		writeHTML(w, http.StatusNotFound, "404 Not Found")
		return
	}
	l := wr.Read(r)
	req := Request{At: time.Now(), Provider: s.provider, Key: l.Key, FirstName: l.FirstName, LastName: l.LastName, Domain: l.Domain, Email: l.Email}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	mode, retryAfter, latency, slowDelay, keys := s.mode, s.retryAfter, s.latency, s.slowDelay, s.keys
	hold := s.holdAfter >= 0 && len(s.requests) > s.holdAfter
	if hold {
		s.held++
	}
	s.mu.Unlock()
	if hold {
		s.wait(r.Context(), holdLimit)
		s.locked(func() { s.held-- })
		return
	}

	s.wait(r.Context(), latency)
	switch mode {
	case ModeServerError:
		writeHTML(w, http.StatusBadGateway, "502 Bad Gateway")
		return
	case ModeSlow:
		s.wait(r.Context(), slowDelay)
	case ModeMalformed:
		providerspec.WriteRaw(w, http.StatusOK, "application/json", `{"data":{"email":"jo`)
		return
	case ModeHugeBody:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprintf(w, `{"data":{"email":null,"pad":"%s"}}`, strings.Repeat("x", 2<<20))
		return
	case ModeTruncated:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "4096")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"data":{"email":"trunc`))
		return
	case ModeRedirect:
		http.Redirect(w, r, s.elsewhere.URL+r.URL.RequestURI(), http.StatusFound)
		return
	}
	if req.Key == "" || (keys != nil && !keys[req.Key]) {
		wr.Unauthorized(w, l)
		return
	}
	switch mode {
	case ModeQuotaExhausted, ModeQuota429:
		wr.Quota(w, l, mode == ModeQuota429)
		return
	case ModeRateLimited:
		wr.RateLimited(w, retryAfter)
		return
	}
	if wr.Invalid(w, l) {
		return
	}
	if !s.serveWithinQuota() {
		wr.Quota(w, l, false)
		return
	}
	wr.Answer(w, l, directory{s})
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
