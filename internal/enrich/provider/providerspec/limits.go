package providerspec

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Limits is one provider's bucket and price, as the guard enforces them.
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
