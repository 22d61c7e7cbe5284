package hunter

import (
	"encoding/json"
	"net/http"

	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

// standIn speaks Hunter v2's Email Finder: errors are
// {"errors":[{"id","code","details"}]}, 429 is the billing-period quota and
// 403 the per-second/minute rate limit.
type standIn struct {
	providerspec.Endpoint
	credits providerspec.Endpoint
}

func (standIn) Read(r *http.Request) providerspec.Lookup {
	q := r.URL.Query()
	key := q.Get("api_key")
	if key == "" {
		key = r.Header.Get("X-API-KEY")
	}
	return providerspec.Lookup{Key: key, FirstName: q.Get("first_name"), LastName: q.Get("last_name"), Domain: q.Get("domain")}
}

func hunterError(w http.ResponseWriter, status int, id, details string) {
	body, _ := json.Marshal(map[string]any{"errors": []map[string]any{{"id": id, "code": status, "details": details}}})
	providerspec.WriteRaw(w, status, "application/json; charset=utf-8", string(body))
}

func (standIn) Unauthorized(w http.ResponseWriter, _ providerspec.Lookup) {
	hunterError(w, http.StatusUnauthorized, "authentication_failed", "No user found for the API key supplied")
}

func (standIn) Invalid(w http.ResponseWriter, req providerspec.Lookup) bool {
	switch {
	case req.Domain == "":
		hunterError(w, http.StatusBadRequest, "wrong_params", "You are missing the domain parameter")
	case req.FirstName == "" && req.LastName == "":
		hunterError(w, http.StatusBadRequest, "wrong_params", "You are missing the first_name or last_name parameter")
	default:
		return false
	}
	return true
}

func (standIn) Quota(w http.ResponseWriter, _ providerspec.Lookup, _ bool) {
	hunterError(w, http.StatusTooManyRequests, "too_many_requests",
		"You've reached the limit for the number of searches per billing period included in your plan.")
}

func (standIn) RateLimited(w http.ResponseWriter, retryAfter string) {
	providerspec.SetRetryAfter(w, retryAfter)
	hunterError(w, http.StatusForbidden, "rate_limited", "You have reached the rate limit.")
}

func (standIn) Answer(w http.ResponseWriter, req providerspec.Lookup, dir providerspec.Directory) {
	email, found := dir.Find(req.FirstName, req.LastName, req.Domain)
	data := map[string]any{
		"first_name": req.FirstName, "last_name": req.LastName, "email": nil, "score": nil,
		"domain": req.Domain, "accept_all": false, "position": nil, "twitter": nil,
		"linkedin_url": nil, "phone_number": nil, "company": nil, "sources": []any{},
		"verification": map[string]any{"date": nil, "status": nil},
	}
	if found {
		data["email"], data["score"] = email, 94
		data["verification"] = map[string]any{"date": "2026-05-01", "status": "valid"}
	}
	body, _ := json.Marshal(map[string]any{
		"data": data,
		"meta": map[string]any{"params": map[string]any{
			"first_name": req.FirstName, "last_name": req.LastName, "full_name": nil,
			"domain": req.Domain, "company": nil, "max_duration": nil,
		}},
	})
	providerspec.WriteRaw(w, http.StatusOK, "application/json; charset=utf-8", string(body))
}

func (s standIn) CreditsRoute(r *http.Request) bool { return s.credits.Route(r) }

// Credits answers /v2/account: the plan's searches, used and available in
// the billing period (Hunter's available is the period's allowance).
func (standIn) Credits(w http.ResponseWriter, _ providerspec.Lookup, remaining, used int) {
	counter := map[string]any{"used": used, "available": used + remaining}
	body, _ := json.Marshal(map[string]any{"data": map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "email": "ada@stand-in.example",
		"plan_name": "Starter", "plan_level": 1, "reset_date": "2026-07-01", "team_id": 1,
		"calls":    counter,
		"requests": map[string]any{"searches": counter, "verifications": map[string]any{"used": 0, "available": 1000}},
	}})
	providerspec.WriteRaw(w, http.StatusOK, "application/json; charset=utf-8", string(body))
}
