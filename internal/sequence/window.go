package sequence

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// LeadTimezone is the window timezone meaning "each lead's own zone".
const LeadTimezone = "lead"

// Window is the part of the week a campaign may send in.
type Window struct {
	// Timezone is LeadTimezone or an IANA zone name.
	Timezone string
	Days     [7]bool // indexed by time.Weekday
	// Start and End are minutes after midnight; End is exclusive.
	Start, End int

	loc *time.Location // nil for LeadTimezone
}

var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

func (f *windowFile) validate(path string) (*Window, error) {
	return parseWindow(path, f.Timezone, f.Days, f.Start, f.End)
}

// NewWindow builds a window from its stored form, checked as in YAML.
func NewWindow(timezone string, days []string, start, end string) (*Window, error) {
	return parseWindow("window", timezone, days, start, end)
}

// parseWindow reads a window's zone, day names and HH:MM clocks; errors
// name the field under path.
func parseWindow(path, timezone string, days []string, start, end string) (*Window, error) {
	w := &Window{Timezone: timezone}
	switch timezone {
	case "":
		return nil, fmt.Errorf("%s.timezone: required (%q or an IANA zone such as Europe/Paris)", path, LeadTimezone)
	case LeadTimezone:
	default:
		loc, err := time.LoadLocation(timezone)
		if err != nil {
			return nil, fmt.Errorf("%s.timezone: unknown zone %q (use %q or an IANA zone such as Europe/Paris)", path, timezone, LeadTimezone)
		}
		w.loc = loc
	}
	if len(days) == 0 {
		return nil, fmt.Errorf("%s.days: at least one day is required (mon..sun)", path)
	}
	for i, d := range days {
		wd, ok := weekdays[strings.ToLower(d)]
		if !ok {
			return nil, fmt.Errorf("%s.days[%d]: %q is not one of mon, tue, wed, thu, fri, sat, sun", path, i, d)
		}
		w.Days[wd] = true
	}
	var err error
	if w.Start, err = parseClock(start); err != nil {
		return nil, fmt.Errorf("%s.start: %w", path, err)
	}
	if w.End, err = parseClock(end); err != nil {
		return nil, fmt.Errorf("%s.end: %w", path, err)
	}
	if w.End <= w.Start {
		return nil, fmt.Errorf("%s.end: %q is not after start %q (windows cannot cross midnight)", path, end, start)
	}
	return w, nil
}

func parseClock(s string) (int, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		if s == "24:00" {
			return 24 * 60, nil
		}
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	return t.Hour()*60 + t.Minute(), nil
}

// DayNames returns the window's days in mon..sun order, as written in YAML.
func (w *Window) DayNames() []string {
	var names []string
	for _, name := range []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"} {
		if w.Days[weekdays[name]] {
			names = append(names, name)
		}
	}
	return names
}

// Clock formats minutes after midnight as HH:MM.
func Clock(minutes int) string {
	return fmt.Sprintf("%02d:%02d", minutes/60, minutes%60)
}

// Location resolves the window's zone for a lead whose zone is leadTZ (an
// IANA name, possibly empty). An unknown lead zone falls back to UTC.
func (w *Window) Location(leadTZ string) *time.Location {
	if w.loc != nil {
		return w.loc
	}
	if loc, err := time.LoadLocation(leadTZ); err == nil && leadTZ != "" {
		return loc
	}
	return time.UTC
}

// Next returns the first instant at or after t inside the window. A nil
// window is always open. Wall-clock times are resolved in the zone, so
// daylight-saving changes keep 09:00 at 09:00 (see wallClock for the
// times a change skips or repeats).
func (w *Window) Next(t time.Time, leadTZ string) time.Time {
	if w == nil {
		return t
	}
	loc := w.Location(leadTZ)
	local := t.In(loc)
	y, m, d := local.Date()
	for offset := 0; offset <= 7; offset++ {
		day := time.Date(y, m, d+offset, 0, 0, 0, 0, loc)
		if !w.Days[day.Weekday()] {
			continue
		}
		start := wallClock(y, m, d+offset, w.Start, loc)
		end := wallClock(y, m, d+offset, w.End, loc)
		switch {
		case t.Before(start):
			return start
		case t.Before(end):
			return t
		}
	}
	// Unreachable for a validated window (at least one day, start < end).
	panic(errors.New("sequence: window has no open day"))
}

// wallClock is the first instant at which the clock in loc shows minutes
// after midnight of day y-m-d. A time the clocks skip (02:30 on the night
// they go forward) is the moment they jump (03:00), never the hour before,
// which time.Date may return; a time they show twice (01:30 on the night
// they go back) is its first occurrence.
func wallClock(y int, m time.Month, d, minutes int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, minutes, 0, 0, loc)
	want := time.Date(y, m, d, 0, minutes, 0, 0, time.UTC)
	l := t.In(loc)
	if time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC).Before(want) {
		_, jump := t.ZoneBounds()
		return jump
	}
	return t
}
