package hunter

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// AccountPath is Hunter's account endpoint: free, it does not count
// against the plan. GET /v2/account?api_key= answers
// {"data":{"plan_name":…,"reset_date":"2026-07-01","requests":{"searches":
// {"used":N,"available":M},"verifications":{…}}}}; the Email Finder draws
// on the searches.
const AccountPath = "/v2/account"

// accountAnswer is the part of the account document read here.
type accountAnswer struct {
	Data *struct {
		ResetDate string `json:"reset_date"`
		Requests  struct {
			Searches struct {
				Used      *int64 `json:"used"`
				Available *int64 `json:"available"`
			} `json:"searches"`
		} `json:"requests"`
	} `json:"data"`
}

var _ enrich.CreditReporter = (*Finder)(nil)

// Credits reads the searches left this billing period.
func (f *Finder) Credits(ctx context.Context) (enrich.Credits, error) {
	target := f.Client().URL(AccountPath, url.Values{"api_key": {f.Client().APIKey()}})
	return providerhttp.Do(ctx, f.Client(), providerhttp.Op[enrich.Credits]{
		Endpoint:   AccountPath,
		NewRequest: providerhttp.GetJSON(target),
		Parse:      parseAccount,
	})
}

func parseAccount(c *providerhttp.Client, resp *providerhttp.Response) (enrich.Credits, error) {
	if resp.Status != http.StatusOK {
		// Errors come in the Email Finder's format and mean the same.
		_, err := parse(c, resp)
		if err == nil {
			err = c.Unexpected(resp, "account answer without data")
		}
		return enrich.Credits{}, err
	}
	var a accountAnswer
	if err := c.DecodeJSON(resp, &a); err != nil {
		return enrich.Credits{}, err
	}
	if a.Data == nil || a.Data.Requests.Searches.Used == nil || a.Data.Requests.Searches.Available == nil {
		return enrich.Credits{}, c.Error(enrich.KindUnavailable, resp, "account answer without requests.searches", nil)
	}
	cr := enrich.Credits{Remaining: max(*a.Data.Requests.Searches.Available-*a.Data.Requests.Searches.Used, 0)}
	if t, err := time.Parse(time.DateOnly, a.Data.ResetDate); err == nil {
		cr.ResetAt = t
	}
	return cr, nil
}
