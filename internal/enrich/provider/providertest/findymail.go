package providertest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
)

// findymailWire speaks Findymail's Laravel API: Bearer auth,
// {"message":"Unauthenticated."}, 402 {"error":"Not enough credits"},
// Laravel's throttle answer and validation errors.
type findymailWire struct{}

func (findymailWire) route(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == findymail.SearchPath
}

func (findymailWire) read(r *http.Request) Request {
	var body findymail.SearchRequest
	_ = json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body)
	first, last, _ := strings.Cut(strings.TrimSpace(body.Name), " ")
	return Request{
		Key:       strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
		FirstName: first, LastName: strings.TrimSpace(last), Domain: body.Domain,
	}
}

func (findymailWire) unauthorized(w http.ResponseWriter, _ Request) {
	writeRaw(w, http.StatusUnauthorized, "application/json", `{"message":"Unauthenticated."}`)
}

func (findymailWire) invalid(w http.ResponseWriter, req Request) bool {
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
	writeRaw(w, http.StatusUnprocessableEntity, "application/json", string(body))
	return true
}

func (findymailWire) quota(w http.ResponseWriter, _ Request, incident bool) {
	if incident {
		writeRaw(w, http.StatusTooManyRequests, "application/json",
			`{"error":"You have used all the credits included in your plan for this billing period."}`)
		return
	}
	writeRaw(w, http.StatusPaymentRequired, "application/json", `{"error":"Not enough credits"}`)
}

func (findymailWire) rateLimited(w http.ResponseWriter, retryAfter string) {
	w.Header().Set("X-RateLimit-Limit", "300")
	w.Header().Set("X-RateLimit-Remaining", "0")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeRaw(w, http.StatusTooManyRequests, "application/json", `{"message":"Too Many Attempts."}`)
}

func (findymailWire) answer(w http.ResponseWriter, req Request, s *Server) {
	email, found := s.find(req.FirstName, req.LastName, req.Domain)
	if !found {
		writeRaw(w, http.StatusOK, "application/json", `{"contact":null}`)
		return
	}
	body, _ := json.Marshal(map[string]any{"contact": map[string]any{
		"id": 1, "name": strings.TrimSpace(req.FirstName + " " + req.LastName), "email": email,
		"domain": req.Domain, "company": nil, "linkedin_url": nil, "job_title": nil,
	}})
	writeRaw(w, http.StatusOK, "application/json", string(body))
}
