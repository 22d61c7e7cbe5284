package findymail

import (
	"context"
	"net/http"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

// CreditsPath is Findymail's balance endpoint: GET /api/credits with the
// Bearer key answers {"credits":N,"verifier_credits":M}. Finding draws on
// credits; verifier_credits is a separate pot this adapter does not use.
const CreditsPath = "/api/credits"

var _ enrich.CreditReporter = (*Finder)(nil)

// Credits reads the finder credits left.
func (f *Finder) Credits(ctx context.Context) (enrich.Credits, error) {
	target := f.Client().URL(CreditsPath, nil)
	return providerhttp.Do(ctx, f.Client(), providerhttp.Op[enrich.Credits]{
		Endpoint: CreditsPath,
		NewRequest: func(ctx context.Context) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+f.Client().APIKey())
				req.Header.Set("Accept", "application/json")
			}
			return req, err
		},
		Parse: parseCredits,
	})
}

func parseCredits(c *providerhttp.Client, resp *providerhttp.Response) (enrich.Credits, error) {
	var a struct {
		Credits *int64 `json:"credits"`
	}
	decodeErr := c.DecodeJSON(resp, &a)
	if resp.Status == http.StatusOK && decodeErr == nil && a.Credits != nil {
		return enrich.Credits{Remaining: max(*a.Credits, 0)}, nil
	}
	if resp.Status == http.StatusOK && decodeErr == nil {
		return enrich.Credits{}, c.Error(enrich.KindUnavailable, resp, "credits answer without credits", nil)
	}
	// Errors mean what they mean for a search.
	if _, err := parse(c, resp); err != nil {
		return enrich.Credits{}, err
	}
	return enrich.Credits{}, c.Otherwise(resp, decodeErr, "")
}
