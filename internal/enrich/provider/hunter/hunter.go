// Package hunter is the Hunter.io v2 Email Finder adapter.
//
// Wire format, from https://hunter.io/api-documentation/v2 (Errors and Email
// Finder sections):
//   - GET https://api.hunter.io/v2/email-finder?domain=&first_name=&last_name=&api_key=
//   - success: {"data":{"email":...,"score":...},"meta":{...}}; a null
//     data.email is a clean miss.
//   - errors: {"errors":[{"id":"wrong_params","code":400,"details":"..."}]}
//   - 401 no valid API key; 403 "You have reached the rate limit" (per
//     second/minute); 429 "You have reached your usage limit" (the billing
//     period's searches, e.g. id too_many_requests, "You've reached the limit
//     for the number of searches per billing period included in your plan");
//     451 the person asked not to be processed; 5xx Hunter's side.
//
// Note the inversion: at Hunter 429 is the quota and 403 the rate limit.
package hunter

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

const (
	// Name is the provider name used in flags, errors and RINDA_HUNTER_*.
	Name = "hunter"
	// BaseURLDefault is Hunter's public API host.
	BaseURLDefault = "https://api.hunter.io"
	// FinderPath is the Email Finder endpoint.
	FinderPath = "/v2/email-finder"
)

// Descriptor is Hunter for the registry, the guard and providertest.
// Hunter allows 15 requests/s and 500/min per key; 8/s with a burst of 7
// keeps both. It bills found addresses only.
var Descriptor = providerspec.Descriptor{
	Name: Name, Role: providerspec.Finder, NewFinder: providerspec.FinderFromEnv(Name, BaseURLDefault, New),
	Limits: providerspec.Limits{Rate: providerspec.Rate{Count: 8, Per: time.Second}, Burst: 7, CostUSD: 0.0245},
	StandIn: standIn{Endpoint: providerspec.Endpoint{Method: http.MethodGet, Path: FinderPath},
		credits: providerspec.Endpoint{Method: http.MethodGet, Path: AccountPath}},
}

// Finder finds addresses with Hunter's Email Finder.
type Finder struct {
	providerhttp.Adapter
}

// New returns a Finder for cfg (Provider is forced to Name).
func New(cfg providerhttp.Config) *Finder { return &Finder{providerhttp.NewAdapter(Name, cfg)} }

// FindEmail asks Hunter for the lead's most likely address.
func (f *Finder) FindEmail(ctx context.Context, lead enrich.Lead) (enrich.Finding, error) {
	q := url.Values{
		"domain":     {lead.Domain},
		"first_name": {lead.FirstName},
		"last_name":  {lead.LastName},
		"api_key":    {f.Client().APIKey()},
	}
	target := f.Client().URL(FinderPath, q)
	return providerhttp.Do(ctx, f.Client(), providerhttp.Op[enrich.Finding]{
		Endpoint:   FinderPath,
		NewRequest: providerhttp.GetJSON(target),
		Parse:      parse,
		LogAttrs:   providerhttp.LeadAttrs(lead),
	})
}

// answer is the union of Hunter's success and error documents.
type answer struct {
	Data *struct {
		Email *string `json:"email"`
		Score *int    `json:"score"`
	} `json:"data"`
	Errors []struct {
		ID      string `json:"id"`
		Code    int    `json:"code"`
		Details string `json:"details"`
	} `json:"errors"`
}

func (a *answer) message() string {
	var parts []string
	for _, e := range a.Errors {
		parts = append(parts, strings.TrimSpace(e.ID+": "+e.Details))
	}
	return strings.Join(parts, "; ")
}

// parse classifies one Hunter answer.
func parse(c *providerhttp.Client, resp *providerhttp.Response) (enrich.Finding, error) {
	var a answer
	decodeErr := c.DecodeJSON(resp, &a)
	msg := c.Text(a.message())
	switch status := a.status(resp.Status, decodeErr == nil); {
	case status == http.StatusOK:
		if decodeErr != nil {
			return enrich.Finding{}, decodeErr
		}
		return a.finding(c, resp)
	case status == http.StatusTooManyRequests:
		return enrich.Finding{}, c.Error(enrich.KindQuota, resp, or(msg, "usage limit of the billing period reached"), nil)
	case status == http.StatusForbidden:
		return enrich.Finding{}, c.RateLimited(resp, or(msg, "rate limit reached"))
	case status == http.StatusUnauthorized:
		return enrich.Finding{}, c.Error(enrich.KindAuth, resp, join(msg, "check "+providerhttp.KeyEnv(Name)), nil)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		if decodeErr != nil { // a proxy's error page, not Hunter judging the lead
			return enrich.Finding{}, decodeErr
		}
		return enrich.Finding{}, c.Error(enrich.KindInvalidLead, resp, msg, nil)
	case status == http.StatusUnavailableForLegalReasons:
		// The person asked Hunter not to process their address: a miss.
		return enrich.Finding{}, nil
	case status == http.StatusNotFound:
		return enrich.Finding{}, c.Error(enrich.KindAuth, resp, "endpoint not found; check "+providerhttp.BaseURLEnv(Name), nil)
	case decodeErr != nil && status < 500:
		return enrich.Finding{}, decodeErr
	}
	return enrich.Finding{}, c.Unexpected(resp, msg)
}

// status is the HTTP status an answer is classified by: the response's,
// except that a decoded 200 carrying only errors counts as the code its
// first error names.
func (a *answer) status(httpStatus int, decoded bool) int {
	if httpStatus == http.StatusOK && decoded && len(a.Errors) > 0 && a.Data == nil {
		return a.Errors[0].Code
	}
	return httpStatus
}

// finding is what a decoded 200 says: an address (with its score, 0 to
// 100), a clean miss, or an answer that is not one.
func (a *answer) finding(c *providerhttp.Client, resp *providerhttp.Response) (enrich.Finding, error) {
	if a.Data == nil {
		return enrich.Finding{}, c.Error(enrich.KindUnavailable, resp, "answer has neither data nor errors", nil)
	}
	if a.Data.Email == nil || strings.TrimSpace(*a.Data.Email) == "" {
		return enrich.Finding{}, nil
	}
	email := strings.TrimSpace(*a.Data.Email)
	if !providerhttp.PlausibleEmail(email) {
		return enrich.Finding{}, c.Error(enrich.KindUnavailable, resp, "answer's email is not an address", nil)
	}
	f := enrich.Finding{Email: email, Found: true}
	if a.Data.Score != nil {
		f.Score = min(max(*a.Data.Score, 0), 100)
	}
	return f, nil
}

// or is msg, or def when Hunter said nothing.
func or(msg, def string) string {
	if msg == "" {
		return def
	}
	return msg
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
