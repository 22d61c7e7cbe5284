package millionverifier

import (
	"context"
	"net/http"
	"net/url"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// CreditsPath is MillionVerifier's balance endpoint: GET
// /api/v3/credits?api=KEY answers {"credits":N,"bulk_credits":M,…}; every
// single-check answer carries the same credits field. Single checks draw
// on credits.
const CreditsPath = "/api/v3/credits"

var _ enrich.CreditReporter = (*Verifier)(nil)

// Credits reads the single-check credits left.
func (v *Verifier) Credits(ctx context.Context) (enrich.Credits, error) {
	target := v.Client().URL(CreditsPath, url.Values{"api": {v.Client().APIKey()}})
	return providerhttp.Do(ctx, v.Client(), providerhttp.Op[enrich.Credits]{
		Endpoint:   CreditsPath,
		NewRequest: providerhttp.GetJSON(target),
		Parse:      parseCredits,
	})
}

func parseCredits(c *providerhttp.Client, resp *providerhttp.Response) (enrich.Credits, error) {
	var a struct {
		Credits *int64 `json:"credits"`
		Error   string `json:"error"`
		Result  string `json:"result"`
	}
	decodeErr := c.DecodeJSON(resp, &a)
	switch {
	case resp.Status != http.StatusOK:
		return enrich.Credits{}, c.Otherwise(resp, decodeErr, c.Text(a.Error))
	case decodeErr != nil:
		return enrich.Credits{}, decodeErr
	case a.Error != "" || a.Result == ResultError:
		return enrich.Credits{}, errorInside(c, resp, c.Text(a.Error))
	case a.Credits == nil:
		return enrich.Credits{}, c.Error(enrich.KindUnavailable, resp, "credits answer without credits", nil)
	}
	return enrich.Credits{Remaining: max(*a.Credits, 0)}, nil
}
