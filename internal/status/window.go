package status

import (
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
)

// window is a campaign's sending window read with the email tick's own
// rules (sequence.Window); a nil inner window sends at any time.
type window struct{ w *sequence.Window }

// newWindow reads a stored window as the email tick does: no zone means no
// window. Imports validate windows before storing them, so a stored one that
// fails validation was edited by hand; it is shown as open at any time.
func newWindow(zone string, days []string, start, end string) window {
	if zone == "" {
		return window{}
	}
	w, err := sequence.NewWindow(zone, days, start, end)
	if err != nil {
		return window{}
	}
	return window{w}
}

func campaignWindow(c store.OpsCampaign) window {
	return newWindow(c.WindowTimezone, c.WindowDays, c.WindowStart, c.WindowEnd)
}

// location resolves the window's zone for a lead in leadTZ.
func (w window) location(leadTZ string) *time.Location {
	if w.w == nil {
		return time.UTC
	}
	return w.w.Location(leadTZ)
}

// open reports whether the window is open at t for a lead in leadTZ: the
// tick would send at t, not later.
func (w window) open(t time.Time, leadTZ string) bool {
	return w.w.Next(t, leadTZ).Equal(t)
}

// String describes the window for people: "mon,tue 09:00-17:00 Europe/Paris".
func (w window) String() string {
	if w.w == nil {
		return "any time"
	}
	zone := w.w.Timezone
	if zone == sequence.LeadTimezone {
		zone = "lead's timezone"
	}
	return strings.Join(w.w.DayNames(), ",") + " " + sequence.Clock(w.w.Start) + "-" + sequence.Clock(w.w.End) + " " + zone
}
