package providerspec

import (
	"net/http"

	"github.com/rindactl/rindactl/internal/enrich"
)

// StandIn is one provider's wire dialect as a stand-in server speaks it:
// providertest.Server decides what happens (healthy, quota, rate limit,
// hostile modes) and the StandIn writes it the way the provider would.
type StandIn interface {
	// Route reports whether r targets the provider's endpoint.
	Route(r *http.Request) bool
	// Read extracts the key and the lead or address from r.
	Read(r *http.Request) Lookup
	Unauthorized(w http.ResponseWriter, req Lookup)
	// Invalid answers and reports true when the input is unusable.
	Invalid(w http.ResponseWriter, req Lookup) bool
	// Quota answers that the plan's credits are used up; incident selects
	// the answer seen in the incident, where the provider has two.
	Quota(w http.ResponseWriter, req Lookup, incident bool)
	RateLimited(w http.ResponseWriter, retryAfter string)
	Answer(w http.ResponseWriter, req Lookup, dir Directory)
	// CreditsRoute reports whether r targets the provider's free account
	// (credits) endpoint; Credits answers it for req.Key's account, which
	// has remaining credits left after used billed calls.
	CreditsRoute(r *http.Request) bool
	Credits(w http.ResponseWriter, req Lookup, remaining, used int)
}

// Endpoint is the method and path a stand-in answers on; a StandIn embeds
// it for its Route.
type Endpoint struct{ Method, Path string }

// Route reports whether r targets the endpoint.
func (e Endpoint) Route(r *http.Request) bool { return r.Method == e.Method && r.URL.Path == e.Path }

// SetRetryAfter sets the Retry-After header of a throttling answer, unless
// the scenario sends none.
func SetRetryAfter(w http.ResponseWriter, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
}

// Lookup is what a request to a stand-in asked for.
type Lookup struct {
	Key                 string
	FirstName, LastName string
	Domain, Email       string
}

// Directory is the stand-in's data: who has which address, and the
// verdict for an address.
type Directory interface {
	Find(first, last, domain string) (email string, found bool)
	Verdict(email string) enrich.Verdict
	// Credits is what the request's key has left after this answer.
	Credits() int
}

// WriteRaw writes a response with exactly this status, type and body.
func WriteRaw(w http.ResponseWriter, status int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
