package guard

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Limits is one provider's bucket and price.
type Limits struct {
	// Rate is the sustained call rate; the zero Rate means no bucket.
	Rate Rate
	// Burst is how many calls may go out at once after a quiet spell.
	Burst int
	// PerWorkspace gives each workspace its own bucket (each workspace
	// brings its own API key); otherwise all workspaces share one.
	PerWorkspace bool
	// CostUSD is the price of one billed call.
	CostUSD float64
	// BillMisses: a call that found nothing is billed too.
	BillMisses bool
}

// Provider defaults, from each provider's documentation and list prices
// (docs/guards.md has the sources). Hunter allows 15 requests/s and 500/min
// per key; 8/s with a burst of 7 keeps both. Findymail documents only 300
// simultaneous requests; 20/s stays far below. MillionVerifier documents no
// per-second limit for single checks; 50/s is a conservative default. Hunter
// and Findymail bill found addresses only; MillionVerifier bills every
// verdict.
var providerDefaults = map[string]Limits{
	"hunter":          {Rate: Rate{Count: 8, Per: time.Second}, Burst: 7, CostUSD: 0.0245},
	"findymail":       {Rate: Rate{Count: 20, Per: time.Second}, Burst: 20, CostUSD: 0.049},
	"millionverifier": {Rate: Rate{Count: 50, Per: time.Second}, Burst: 50, CostUSD: 0.0037, BillMisses: true},
}

// DefaultLimits returns the documented defaults for provider; an unknown
// provider gets no bucket and no price.
func DefaultLimits(provider string) Limits { return providerDefaults[provider] }

// Rate is Count calls per Per.
type Rate struct {
	Count int
	Per   time.Duration
}

// Enabled reports whether the rate limits anything.
func (r Rate) Enabled() bool { return r.Count > 0 && r.Per > 0 }

// Interval is the GCRA emission interval: the time one call uses up.
func (r Rate) Interval() time.Duration {
	if !r.Enabled() {
		return 0
	}
	return r.Per / time.Duration(r.Count)
}

func (r Rate) String() string {
	if !r.Enabled() {
		return "off"
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[r.Per]
	return strconv.Itoa(r.Count) + "/" + unit
}

// ParseRate reads "20/s", "500/m", "1000/h" or "off".
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "off" || s == "0" {
		return Rate{}, nil
	}
	n, unit, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 1 {
		return Rate{}, errors.New("use calls per unit: 20/s, 500/m, 1000/h, or off")
	}
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	if per == 0 {
		return Rate{}, errors.New("unknown unit: use /s, /m or /h")
	}
	return Rate{Count: count, Per: per}, nil
}
