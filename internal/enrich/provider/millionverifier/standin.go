package millionverifier

import (
	"encoding/json"
	"net/http"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

// standIn speaks MillionVerifier's v3 single API, whose errors
// arrive as HTTP 200 with result "error", resultcode 4 and an error string.
type standIn struct {
	providerspec.Endpoint
	credits providerspec.Endpoint
}

var resultCodes = map[enrich.Verdict]int{
	enrich.VerdictOK: 1, enrich.VerdictCatchAll: 2, enrich.VerdictUnknown: 3,
	enrich.VerdictDisposable: 5, enrich.VerdictInvalid: 6,
}

func (standIn) Read(r *http.Request) providerspec.Lookup {
	q := r.URL.Query()
	return providerspec.Lookup{Key: q.Get("api"), Email: q.Get("email")}
}

func mvAnswer(w http.ResponseWriter, email, result string, code int, credits int, errText string) {
	body, _ := json.Marshal(map[string]any{
		"email": email, "quality": "", "result": result, "resultcode": code, "subresult": "",
		"free": false, "role": false, "didyoumean": "", "credits": credits,
		"executiontime": 0, "error": errText, "livemode": true,
	})
	providerspec.WriteRaw(w, http.StatusOK, "application/json", string(body))
}

func (standIn) Unauthorized(w http.ResponseWriter, req providerspec.Lookup) {
	mvAnswer(w, req.Email, "error", 4, 0, "Apikey not found")
}

func (standIn) Invalid(w http.ResponseWriter, req providerspec.Lookup) bool {
	if req.Email != "" {
		return false
	}
	mvAnswer(w, "", "error", 4, 0, "No email specified")
	return true
}

func (standIn) Quota(w http.ResponseWriter, req providerspec.Lookup, _ bool) {
	mvAnswer(w, req.Email, "error", 4, 0, "Insufficient credits")
}

func (standIn) RateLimited(w http.ResponseWriter, retryAfter string) {
	providerspec.SetRetryAfter(w, retryAfter)
	providerspec.WriteRaw(w, http.StatusTooManyRequests, "application/json", `{"error":"Too many requests"}`)
}

func (standIn) Answer(w http.ResponseWriter, req providerspec.Lookup, dir providerspec.Directory) {
	v := dir.Verdict(req.Email)
	mvAnswer(w, req.Email, string(v), resultCodes[v], dir.Credits(), "")
}

func (s standIn) CreditsRoute(r *http.Request) bool { return s.credits.Route(r) }

// Credits answers /api/v3/credits.
func (standIn) Credits(w http.ResponseWriter, _ providerspec.Lookup, remaining, _ int) {
	body, _ := json.Marshal(map[string]any{"credits": remaining, "bulk_credits": 0, "renewing_credits": 0, "plan": 1})
	providerspec.WriteRaw(w, http.StatusOK, "application/json", string(body))
}
