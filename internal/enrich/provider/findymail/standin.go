package findymail

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

// standIn speaks Findymail's Laravel API: Bearer auth,
// {"message":"Unauthenticated."}, 402 {"error":"Not enough credits"},
// Laravel's throttle answer and validation errors.
type standIn struct {
	providerspec.Endpoint
	credits providerspec.Endpoint
}

func (standIn) Read(r *http.Request) providerspec.Lookup {
	var body SearchRequest
	_ = json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body)
	first, last, _ := strings.Cut(strings.TrimSpace(body.Name), " ")
	return providerspec.Lookup{
		Key:       strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
		FirstName: first, LastName: strings.TrimSpace(last), Domain: body.Domain,
	}
}

func (standIn) Unauthorized(w http.ResponseWriter, _ providerspec.Lookup) {
	providerspec.WriteRaw(w, http.StatusUnauthorized, "application/json", `{"message":"Unauthenticated."}`)
}

func (standIn) Invalid(w http.ResponseWriter, req providerspec.Lookup) bool {
	field := ""
	switch {
	case req.FirstName == "" && req.LastName == "":
		field = "name"
	case req.Domain == "":
		field = "domain"
	default:
		return false
	}
	msg := "The " + field + " field is required."
	body, _ := json.Marshal(map[string]any{"message": msg, "errors": map[string][]string{field: {msg}}})
	providerspec.WriteRaw(w, http.StatusUnprocessableEntity, "application/json", string(body))
	return true
}

func (standIn) Quota(w http.ResponseWriter, _ providerspec.Lookup, incident bool) {
	if incident {
		providerspec.WriteRaw(w, http.StatusTooManyRequests, "application/json",
			`{"error":"You have used all the credits included in your plan for this billing period."}`)
		return
	}
	providerspec.WriteRaw(w, http.StatusPaymentRequired, "application/json", `{"error":"Not enough credits"}`)
}

func (standIn) RateLimited(w http.ResponseWriter, retryAfter string) {
	w.Header().Set("X-RateLimit-Limit", "300")
	w.Header().Set("X-RateLimit-Remaining", "0")
	providerspec.SetRetryAfter(w, retryAfter)
	providerspec.WriteRaw(w, http.StatusTooManyRequests, "application/json", `{"message":"Too Many Attempts."}`)
}

func (standIn) Answer(w http.ResponseWriter, req providerspec.Lookup, dir providerspec.Directory) {
	email, found := dir.Find(req.FirstName, req.LastName, req.Domain)
	if !found {
		providerspec.WriteRaw(w, http.StatusOK, "application/json", `{"contact":null}`)
		return
	}
	body, _ := json.Marshal(map[string]any{"contact": map[string]any{
		"id": 1, "name": strings.TrimSpace(req.FirstName + " " + req.LastName), "email": email,
		"domain": req.Domain, "company": nil, "linkedin_url": nil, "job_title": nil,
	}})
	providerspec.WriteRaw(w, http.StatusOK, "application/json", string(body))
}

func (s standIn) CreditsRoute(r *http.Request) bool { return s.credits.Route(r) }

// Credits answers /api/credits: the finder credits and the verifier's pot.
func (standIn) Credits(w http.ResponseWriter, _ providerspec.Lookup, remaining, _ int) {
	body, _ := json.Marshal(map[string]any{"credits": remaining, "verifier_credits": 0})
	providerspec.WriteRaw(w, http.StatusOK, "application/json", string(body))
}
