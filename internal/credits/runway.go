package credits

import (
	"fmt"
	"time"
)

// Runway is how long credits last at perHour billed calls an hour; false
// when nothing was billed in the last hour (no pace to go by).
func Runway(credits, perHour int64) (time.Duration, bool) {
	if perHour <= 0 {
		return 0, false
	}
	return time.Duration(float64(credits) / float64(perHour) * float64(time.Hour)), true
}

// FormatRunway says a runway in words: "about 3 h 10 m", "about 2 d 4 h",
// "about 40 m", or "out of credits".
func FormatRunway(d time.Duration) string {
	switch {
	case d <= 0:
		return "out of credits"
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return fmt.Sprintf("about %d m", int(d.Round(time.Minute)/time.Minute))
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("about %d h %d m", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("about %d d %d h", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}
