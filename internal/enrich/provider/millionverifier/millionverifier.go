// Package millionverifier is the MillionVerifier single-address verifier.
//
// Wire format, from https://developer.millionverifier.com/ (Single API,
// "Verify an email address in real time"):
//   - GET https://api.millionverifier.com/api/v3/?api=KEY&email=...&timeout=10
//     (timeout: 2..60 s the verifier waits for the recipient's server).
//   - answer: {"email":...,"quality":...,"result":"ok","resultcode":1,
//     "subresult":...,"free":false,"role":false,"credits":3454,
//     "executiontime":2,"error":"","livemode":true}; result is ok (1),
//     catch_all (2), unknown (3), error (4), disposable (5), invalid (6).
//   - errors arrive as HTTP 200 with result "error", resultcode 4 and a
//     non-empty error string. The docs' demo keys name the cases (no email,
//     no/invalid API key, insufficient credits, IP address blocked, internal
//     error); a live probe of an unknown key answered "Apikey not found".
package millionverifier

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

const (
	// Name is the provider name used in flags, errors and RINDA_MILLIONVERIFIER_*.
	Name = "millionverifier"
	// BaseURLDefault is MillionVerifier's public API host.
	BaseURLDefault = "https://api.millionverifier.com"
	// VerifyPath is the single-address endpoint.
	VerifyPath = "/api/v3/"
	// SMTPTimeoutDefault is the timeout parameter sent to MillionVerifier:
	// it keeps the answer well inside providerhttp.TimeoutDefault.
	SMTPTimeoutDefault = 10
)

// ResultError is the result value MillionVerifier uses for a failed call.
const ResultError = "error"

// Descriptor is MillionVerifier for the registry, the guard and
// providertest. It documents no per-second limit for single checks; 50/s
// is a conservative default. It bills every verdict.
var Descriptor = providerspec.Descriptor{
	Name: Name, Role: providerspec.Verifier, NewVerifier: providerspec.VerifierFromEnv(Name, BaseURLDefault, New),
	Limits: providerspec.Limits{Rate: providerspec.Rate{Count: 50, Per: time.Second}, Burst: 50, CostUSD: 0.0037, BillMisses: true},
	StandIn: standIn{Endpoint: providerspec.Endpoint{Method: http.MethodGet, Path: VerifyPath},
		credits: providerspec.Endpoint{Method: http.MethodGet, Path: CreditsPath}},
}

// Verifier checks addresses with MillionVerifier.
type Verifier struct {
	providerhttp.Adapter
}

// New returns a Verifier for cfg (Provider is forced to Name).
func New(cfg providerhttp.Config) *Verifier { return &Verifier{providerhttp.NewAdapter(Name, cfg)} }

// Verify asks MillionVerifier for its verdict on email.
func (v *Verifier) Verify(ctx context.Context, email string) (enrich.Verdict, error) {
	if !providerhttp.PlausibleEmail(email) {
		return "", v.Client().Error(enrich.KindInvalidLead, nil, "not an email address", nil)
	}
	target := v.Client().URL(VerifyPath, url.Values{
		"api":     {v.Client().APIKey()},
		"email":   {email},
		"timeout": {strconv.Itoa(SMTPTimeoutDefault)},
	})
	return providerhttp.Do(ctx, v.Client(), providerhttp.Op[enrich.Verdict]{
		Endpoint:   VerifyPath,
		NewRequest: providerhttp.GetJSON(target),
		Parse:      parse,
	})
}

// Answer is MillionVerifier's single-verification document (the fields this
// adapter reads).
type Answer struct {
	Email      string `json:"email"`
	Result     string `json:"result"`
	ResultCode int    `json:"resultcode"`
	Error      string `json:"error"`
}

var verdicts = map[string]enrich.Verdict{
	"ok":         enrich.VerdictOK,
	"catch_all":  enrich.VerdictCatchAll,
	"unknown":    enrich.VerdictUnknown,
	"invalid":    enrich.VerdictInvalid,
	"disposable": enrich.VerdictDisposable,
}

// parse classifies one MillionVerifier answer.
func parse(c *providerhttp.Client, resp *providerhttp.Response) (enrich.Verdict, error) {
	var a Answer
	decodeErr := c.DecodeJSON(resp, &a)
	switch {
	case resp.Status == http.StatusTooManyRequests:
		return "", c.RateLimited(resp, cmp.Or(c.Text(a.Error), "too many requests"))
	case resp.Status == http.StatusForbidden:
		return "", c.Forbidden(resp, c.Text(a.Error))
	case resp.Status != http.StatusOK:
		return "", c.Otherwise(resp, decodeErr, c.Text(a.Error))
	case decodeErr != nil:
		return "", decodeErr
	case a.Error != "" || a.Result == ResultError || a.ResultCode == 4:
		return "", errorInside(c, resp, c.Text(a.Error))
	}
	v, ok := verdicts[a.Result]
	if !ok {
		return "", c.Error(enrich.KindUnavailable, resp, "unknown result "+strconv.Quote(c.Text(a.Result)), nil)
	}
	return v, nil
}

// errorInside classifies MillionVerifier's error-in-200.
func errorInside(c *providerhttp.Client, resp *providerhttp.Response, msg string) error {
	low := strings.ToLower(msg)
	switch {
	case msg == "":
		return c.Error(enrich.KindUnavailable, resp, "result error without a message", nil)
	case enrich.IsQuotaMessage(msg):
		return c.Error(enrich.KindQuota, resp, msg, nil)
	case strings.Contains(low, "apikey") || strings.Contains(low, "api key") || strings.Contains(low, "ip address") || strings.Contains(low, "blocked"):
		return c.Error(enrich.KindAuth, resp, msg+"; check "+providerhttp.KeyEnv(Name), nil)
	case strings.Contains(low, "email"):
		return c.Error(enrich.KindInvalidLead, resp, msg, nil)
	}
	return c.Error(enrich.KindUnavailable, resp, msg, nil)
}
