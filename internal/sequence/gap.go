package sequence

import (
	"fmt"
	"strings"
	"time"
)

// Gap spaces a mailbox's consecutive sends by a random time in [Min, Max],
// as a person sending by hand would. The zero Gap sends back to back.
type Gap struct {
	Min, Max time.Duration
}

// ParseGap reads "60s..180s", or a single duration for a fixed gap.
func ParseGap(s string) (Gap, error) {
	lo, hi, isRange := strings.Cut(s, "..")
	if !isRange {
		hi = lo
	}
	min, err1 := time.ParseDuration(strings.TrimSpace(lo))
	max, err2 := time.ParseDuration(strings.TrimSpace(hi))
	switch {
	case err1 != nil || err2 != nil:
		return Gap{}, fmt.Errorf("%q is not a range of durations like 60s..180s", s)
	case min < 0 || max < min:
		return Gap{}, fmt.Errorf("%q: the range must be non-negative and ascending, like 60s..180s", s)
	case max > 24*time.Hour:
		return Gap{}, fmt.Errorf("%q: a gap over a day would stall the mailbox; use daily_cap or ramp to send less", s)
	}
	return Gap{Min: min, Max: max}, nil
}

// String renders the gap as ParseGap reads it; empty for no gap.
func (g Gap) String() string {
	if g == (Gap{}) {
		return ""
	}
	return g.Min.String() + ".." + g.Max.String()
}
