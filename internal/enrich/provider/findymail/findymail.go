// Package findymail is the Findymail "find from name" adapter.
//
// Wire format, from https://app.findymail.com/docs/ (Authenticating requests,
// Finder, Email Verifier sections; the docs are generated from a Laravel API):
//   - POST https://app.findymail.com/api/search/name with
//     "Authorization: Bearer KEY" and JSON {"name":"First Last","domain":"..."}
//   - success: {"contact":{"name":...,"email":...,"domain":...}}; no contact
//     (null, {} or PHP's []) or a 404 is a clean miss.
//   - out of credits: 402 or a 200 with {"error":"Not enough credits"} (the
//     docs show the latter for /api/verify).
//   - throttling: 429 with Retry-After (Laravel's {"message":"Too Many
//     Attempts."}); the docs state a limit of 300 concurrent requests.
//   - 401 {"message":"Unauthenticated."}; 422 Laravel validation errors.
//
// The incident saw a 429 without Retry-After for an exhausted plan: such a
// 429 whose body speaks of credits, plan or limit is quota, not throttling.
package findymail

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

const (
	// Name is the provider name used in flags, errors and RINDA_FINDYMAIL_*.
	Name = "findymail"
	// BaseURLDefault is Findymail's public API host.
	BaseURLDefault = "https://app.findymail.com"
	// SearchPath is the find-from-name endpoint.
	SearchPath = "/api/search/name"
)

// Descriptor is Findymail for the registry, the guard and providertest.
// Findymail documents only 300 simultaneous requests; 20/s stays far below.
// It bills found addresses only.
var Descriptor = providerspec.Descriptor{
	Name: Name, Role: providerspec.Finder, NewFinder: providerspec.FinderFromEnv(Name, BaseURLDefault, New),
	Limits: providerspec.Limits{Rate: providerspec.Rate{Count: 20, Per: time.Second}, Burst: 20, CostUSD: 0.049},
	StandIn: standIn{Endpoint: providerspec.Endpoint{Method: http.MethodPost, Path: SearchPath},
		credits: providerspec.Endpoint{Method: http.MethodGet, Path: CreditsPath}},
}

// Finder finds addresses with Findymail's name search.
type Finder struct {
	providerhttp.Adapter
}

// New returns a Finder for cfg (Provider is forced to Name).
func New(cfg providerhttp.Config) *Finder { return &Finder{providerhttp.NewAdapter(Name, cfg)} }

// SearchRequest is the JSON body of a name search.
type SearchRequest struct {
	Name   string `json:"name"`
	Domain string `json:"domain"`
}

// FindEmail asks Findymail for the lead's address.
func (f *Finder) FindEmail(ctx context.Context, lead enrich.Lead) (enrich.Finding, error) {
	body, err := json.Marshal(SearchRequest{
		Name:   strings.TrimSpace(lead.FirstName + " " + lead.LastName),
		Domain: lead.Domain,
	})
	if err != nil {
		return enrich.Finding{}, f.Client().Error(enrich.KindInvalidLead, nil, "cannot encode lead", err)
	}
	target := f.Client().URL(SearchPath, nil)
	return providerhttp.Do(ctx, f.Client(), providerhttp.Op[enrich.Finding]{
		Endpoint: SearchPath,
		NewRequest: func(ctx context.Context) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+f.Client().APIKey())
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			return req, nil
		},
		Parse:    parse,
		LogAttrs: providerhttp.LeadAttrs(lead),
	})
}

// answer is the union of Findymail's success and error documents. Contact
// stays raw because PHP serialises an empty contact as [].
type answer struct {
	Contact json.RawMessage `json:"contact"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

type contact struct {
	Email *string `json:"email"`
}

// parse classifies one Findymail answer.
func parse(c *providerhttp.Client, resp *providerhttp.Response) (enrich.Finding, error) {
	var a answer
	decodeErr := c.DecodeJSON(resp, &a)
	msg := c.Text(strings.TrimSpace(a.Error + " " + a.Message))
	switch resp.Status {
	case http.StatusOK:
		if decodeErr != nil {
			return enrich.Finding{}, decodeErr
		}
		if a.Error != "" {
			return enrich.Finding{}, errorInside(c, resp, msg)
		}
		return readContact(c, resp, a.Contact)
	case http.StatusPaymentRequired:
		return enrich.Finding{}, c.Error(enrich.KindQuota, resp, cmp.Or(msg, "not enough credits"), nil)
	case http.StatusTooManyRequests:
		if _, ok := c.RetryAfter(resp); ok {
			return enrich.Finding{}, c.RateLimited(resp, cmp.Or(msg, "too many requests"))
		}
		if enrich.IsQuotaMessage(msg) {
			return enrich.Finding{}, c.Error(enrich.KindQuota, resp, msg, nil)
		}
		return enrich.Finding{}, c.RateLimited(resp, cmp.Or(msg, "too many requests"))
	case http.StatusForbidden:
		if enrich.IsQuotaMessage(msg) {
			return enrich.Finding{}, c.Error(enrich.KindQuota, resp, msg, nil)
		}
		return enrich.Finding{}, c.Forbidden(resp, msg)
	case http.StatusNotFound:
		if decodeErr != nil { // an HTML 404: the base URL points elsewhere
			return enrich.Finding{}, c.Error(enrich.KindAuth, resp, "endpoint not found; check "+providerhttp.BaseURLEnv(Name), nil)
		}
		return enrich.Finding{}, nil
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		if decodeErr != nil {
			return enrich.Finding{}, decodeErr
		}
		return enrich.Finding{}, c.Error(enrich.KindInvalidLead, resp, cmp.Or(msg, "lead rejected"), nil)
	}
	return enrich.Finding{}, c.Otherwise(resp, decodeErr, msg)
}

// errorInside classifies a 200 that carries an error string.
func errorInside(c *providerhttp.Client, resp *providerhttp.Response, msg string) error {
	low := strings.ToLower(msg)
	switch {
	case enrich.IsQuotaMessage(msg):
		return c.Error(enrich.KindQuota, resp, msg, nil)
	case strings.Contains(low, "unauthenticated") || strings.Contains(low, "api key") || strings.Contains(low, "token"):
		return c.Error(enrich.KindAuth, resp, msg+"; check "+providerhttp.KeyEnv(Name), nil)
	}
	return c.Error(enrich.KindUnavailable, resp, msg, nil)
}

func readContact(c *providerhttp.Client, resp *providerhttp.Response, raw json.RawMessage) (enrich.Finding, error) {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "[]", "{}":
		return enrich.Finding{}, nil
	}
	var ct contact
	if err := json.Unmarshal(raw, &ct); err != nil {
		return enrich.Finding{}, c.Malformed(resp, err)
	}
	if ct.Email == nil || strings.TrimSpace(*ct.Email) == "" {
		return enrich.Finding{}, nil
	}
	email := strings.TrimSpace(*ct.Email)
	if !providerhttp.PlausibleEmail(email) {
		return enrich.Finding{}, c.Error(enrich.KindUnavailable, resp, "answer's email is not an address", nil)
	}
	return enrich.Finding{Email: email, Found: true}, nil
}
