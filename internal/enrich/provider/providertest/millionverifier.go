package providertest

import (
	"encoding/json"
	"net/http"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/millionverifier"
)

// millionVerifierWire speaks MillionVerifier's v3 single API, whose errors
// arrive as HTTP 200 with result "error", resultcode 4 and an error string.
type millionVerifierWire struct{}

var resultCodes = map[enrich.Verdict]int{
	enrich.VerdictOK: 1, enrich.VerdictCatchAll: 2, enrich.VerdictUnknown: 3,
	enrich.VerdictDisposable: 5, enrich.VerdictInvalid: 6,
}

func (millionVerifierWire) route(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == millionverifier.VerifyPath
}

func (millionVerifierWire) read(r *http.Request) Request {
	q := r.URL.Query()
	return Request{Key: q.Get("api"), Email: q.Get("email")}
}

func mvAnswer(w http.ResponseWriter, email, result string, code int, credits int, errText string) {
	body, _ := json.Marshal(map[string]any{
		"email": email, "quality": "", "result": result, "resultcode": code, "subresult": "",
		"free": false, "role": false, "didyoumean": "", "credits": credits,
		"executiontime": 0, "error": errText, "livemode": true,
	})
	writeRaw(w, http.StatusOK, "application/json", string(body))
}

func (millionVerifierWire) unauthorized(w http.ResponseWriter, req Request) {
	mvAnswer(w, req.Email, "error", 4, 0, "Apikey not found")
}

func (millionVerifierWire) invalid(w http.ResponseWriter, req Request) bool {
	if req.Email != "" {
		return false
	}
	mvAnswer(w, "", "error", 4, 0, "No email specified")
	return true
}

func (millionVerifierWire) quota(w http.ResponseWriter, req Request, _ bool) {
	mvAnswer(w, req.Email, "error", 4, 0, "Insufficient credits")
}

func (millionVerifierWire) rateLimited(w http.ResponseWriter, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeRaw(w, http.StatusTooManyRequests, "application/json", `{"error":"Too many requests"}`)
}

func (millionVerifierWire) answer(w http.ResponseWriter, req Request, s *Server) {
	s.mu.Lock()
	v := s.verdicts(req.Email)
	s.mu.Unlock()
	mvAnswer(w, req.Email, string(v), resultCodes[v], 10000, "")
}
