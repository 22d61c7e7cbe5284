package status

import (
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/store"
)

// leadTimezone is the campaign window zone meaning "each lead's own zone".
const leadTimezone = "lead"

// window is a campaign's sending window as stored: the days of the week and
// [start, end) in minutes after midnight, in a zone or in each lead's zone.
// It mirrors the email tick's rules: an unknown lead zone falls back to UTC.
type window struct {
	zone       string
	days       [7]bool
	start, end int
}

var weekdayNames = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// newWindow reads a stored window; nil means the campaign sends at any time.
func newWindow(zone string, days []string, start, end string) *window {
	if start == "" || end == "" {
		return nil
	}
	w := &window{zone: zone, start: clockMinutes(start), end: clockMinutes(end)}
	for _, d := range days {
		if wd, ok := weekdayNames[strings.ToLower(d)]; ok {
			w.days[wd] = true
		}
	}
	return w
}

func campaignWindow(c store.OpsCampaign) *window {
	return newWindow(c.WindowTimezone, c.WindowDays, c.WindowStart, c.WindowEnd)
}

func clockMinutes(hhmm string) int {
	if hhmm == "24:00" {
		return 24 * 60
	}
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		return 0
	}
	return t.Hour()*60 + t.Minute()
}

// location resolves the window's zone for a lead in leadTZ.
func (w *window) location(leadTZ string) *time.Location {
	name := w.zone
	if name == leadTimezone {
		name = leadTZ
	}
	if name == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// open reports whether the window is open at t for a lead in leadTZ. A nil
// window is always open.
func (w *window) open(t time.Time, leadTZ string) bool {
	if w == nil {
		return true
	}
	local := t.In(w.location(leadTZ))
	minute := local.Hour()*60 + local.Minute()
	return w.days[local.Weekday()] && minute >= w.start && minute < w.end
}

// String describes the window for people: "mon-fri 09:00-17:00 Europe/Paris".
func (w *window) String() string {
	var days []string
	for _, name := range []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"} {
		if w.days[weekdayNames[name]] {
			days = append(days, name)
		}
	}
	zone := w.zone
	if zone == leadTimezone {
		zone = "lead's timezone"
	}
	return strings.Join(days, ",") + " " + minutesClock(w.start) + "-" + minutesClock(w.end) + " " + zone
}

func minutesClock(m int) string {
	if m == 24*60 {
		return "24:00"
	}
	return time.Date(0, 1, 1, 0, m, 0, 0, time.UTC).Format("15:04")
}
