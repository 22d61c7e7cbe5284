package guard

import (
	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

// Ledger states of provider_calls.
const (
	ledgerSettled  = "settled"
	ledgerRefunded = "refunded"
)

// ledgerState decides whether an admitted call's reserved cost is kept: a
// found result is billed, a miss only when the provider bills misses, and a
// failed call never (providers do not charge errors).
func ledgerState(res enrich.CallResult, lim providerspec.Limits) string {
	switch {
	case res.Outcome == enrich.CallFound:
		return ledgerSettled
	case res.Outcome == enrich.CallNotFound && lim.BillMisses:
		return ledgerSettled
	default:
		return ledgerRefunded
	}
}
