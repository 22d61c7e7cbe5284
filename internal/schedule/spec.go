// Package schedule turns cron specs into deployable units (crontab lines,
// systemd service and timer pairs, Kubernetes CronJobs) and runs ticks on a
// schedule as child processes for hosts without a cron daemon.
package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// SpecDefault fires every minute. Short bounded ticks that run often keep the
// backlog moving without any single process holding work for long.
const SpecDefault = "* * * * *"

// fieldNames name the six cron fields in robfig order (seconds first).
var fieldNames = [6]string{"second", "minute", "hour", "day-of-month", "month", "day-of-week"}

// descriptors are the @-shorthands cron daemons, systemd and Kubernetes all
// understand, spelled out so every generator sees plain fields. @every is
// left out on purpose: crontab cannot express it.
var descriptors = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// SpecError says which spec, which field and why a cron spec was rejected.
type SpecError struct {
	Spec   string
	Field  string // empty when the spec as a whole is wrong (field count, descriptor)
	Reason string
}

func (e *SpecError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("cron spec %q: %s", e.Spec, e.Reason)
	}
	return fmt.Sprintf("cron spec %q: %s field: %s", e.Spec, e.Field, e.Reason)
}

// Spec is a validated cron spec.
type Spec struct {
	text       string
	expr       string // text without its CRON_TZ= prefix
	zone       string // IANA zone of a CRON_TZ= (or TZ=) prefix; "" is the host's zone
	loc        *time.Location
	fields     [6]string // second..day-of-week; second is "0" when the spec has five fields
	hasSeconds bool
	sched      *cron.SpecSchedule
}

// Parse accepts a standard five-field spec (minute hour day-of-month month
// day-of-week) or an @hourly-style descriptor: what crontab, systemd and
// Kubernetes can all run.
func Parse(text string) (Spec, error) {
	return parse(text, false)
}

// ParseWithSeconds also accepts a leading seconds field, for `rindactl run`.
func ParseWithSeconds(text string) (Spec, error) {
	return parse(text, true)
}

func parse(text string, allowSeconds bool) (Spec, error) {
	text = strings.Join(strings.Fields(text), " ")
	fail := func(e *SpecError) (Spec, error) {
		e.Spec = text
		return Spec{}, e
	}
	if text == "" {
		return fail(specError("", "empty; use five fields like %q", SpecDefault))
	}
	expr, zone, loc, serr := splitZone(text)
	if serr != nil {
		return fail(serr)
	}
	fields, hasSeconds, serr := specFields(expr, allowSeconds)
	if serr != nil {
		return fail(serr)
	}
	// Parse each field on its own first so the error can name it: robfig's
	// messages quote the bad expression but not which field it was in.
	parser := cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	for i, f := range fields {
		probe := [6]string{"0", "*", "*", "*", "*", "*"}
		probe[i] = f
		if _, err := parser.Parse(strings.Join(probe[:], " ")); err != nil {
			return fail(specError(fieldNames[i], "%q: %s", f, strings.TrimSuffix(err.Error(), ": "+f)))
		}
	}
	sched, err := parser.Parse(strings.Join(fields[:], " "))
	if err != nil {
		return fail(specError("", "%s", err))
	}
	spec := Spec{text: text, expr: expr, zone: zone, loc: loc, fields: fields, hasSeconds: hasSeconds, sched: sched.(*cron.SpecSchedule)}
	if field, ok := spec.ambiguousDay(); ok {
		return fail(specError(field, "%q with a restricted %s picks different days in Vixie cron (AND) and robfig/cron (OR); list the values instead of using a step on *",
			spec.fields[fieldIndex(field)], otherDayField(field)))
	}
	if spec.neverFires() {
		return fail(specError("", "never fires (a day-of-month that the month never has?); check the day-of-month and month fields"))
	}
	return spec, nil
}

// specError is a SpecError without its spec (parse adds it).
func specError(field, format string, args ...any) *SpecError {
	return &SpecError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// splitZone takes a CRON_TZ= (or TZ=) prefix off text: the expression
// after it and the zone ("" and nil without one).
func splitZone(text string) (expr, zone string, loc *time.Location, serr *SpecError) {
	if !strings.HasPrefix(text, "TZ=") && !strings.HasPrefix(text, "CRON_TZ=") {
		return text, "", nil, nil
	}
	prefix, rest, _ := strings.Cut(text, " ")
	_, zone, _ = strings.Cut(prefix, "=")
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "" || strings.EqualFold(zone, "local") {
		return "", "", nil, specError("", "unknown time zone %q: use an IANA zone like Europe/Paris", zone)
	}
	return rest, zone, loc, nil
}

// specFields are expr's six fields, second first ("0" when expr has five),
// a descriptor (@hourly, ...) expanded.
func specFields(expr string, allowSeconds bool) (fields [6]string, hasSeconds bool, serr *SpecError) {
	if strings.HasPrefix(expr, "@") {
		expanded, ok := descriptors[expr]
		if !ok {
			return fields, false, specError("", "unknown descriptor; use @hourly, @daily, @weekly, @monthly, @yearly or five fields")
		}
		expr = expanded
	}
	parts := strings.Fields(expr)
	switch {
	case len(parts) == 5:
		fields[0] = "0"
		copy(fields[1:], parts)
		return fields, false, nil
	case len(parts) == 6 && allowSeconds:
		copy(fields[:], parts)
		return fields, true, nil
	case allowSeconds:
		return fields, false, specError("", "expected 5 fields (minute hour day-of-month month day-of-week) or 6 with a leading second, found %d", len(parts))
	}
	return fields, false, specError("", "expected 5 fields (minute hour day-of-month month day-of-week), found %d", len(parts))
}

// neverFires reports a spec robfig/cron finds no firing for: robfig gives up
// after five years and returns the zero time.
func (s Spec) neverFires() bool {
	sched := *s.sched
	sched.Location = time.UTC
	return sched.Next(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)).IsZero()
}

// starBit is robfig's marker for a field written as * or ?, which decides
// whether day-of-month and day-of-week are ANDed or ORed.
const starBit = 1 << 63

// ambiguousDay reports a day field written as */N (N > 1) while the other day
// field is restricted: Vixie cron treats it as * (days ANDed) and robfig/cron,
// which Kubernetes uses, does not (days ORed), so one spec would fire on
// different days depending on where it is installed.
func (s Spec) ambiguousDay() (string, bool) {
	domStarred := s.sched.Dom&starBit != 0
	dowStarred := s.sched.Dow&starBit != 0
	domWritten := strings.HasPrefix(s.fields[3], "*") || strings.HasPrefix(s.fields[3], "?")
	dowWritten := strings.HasPrefix(s.fields[5], "*") || strings.HasPrefix(s.fields[5], "?")
	switch {
	case domWritten && !domStarred && !dowWritten:
		return "day-of-month", true
	case dowWritten && !dowStarred && !domWritten:
		return "day-of-week", true
	}
	return "", false
}

func fieldIndex(name string) int {
	for i, n := range fieldNames {
		if n == name {
			return i
		}
	}
	return -1
}

func otherDayField(name string) string {
	if name == "day-of-month" {
		return "day-of-week"
	}
	return "day-of-month"
}

// String returns the spec as written, whitespace normalised.
func (s Spec) String() string { return s.text }

// Expr is the spec without its CRON_TZ= prefix: the schedule fields alone.
func (s Spec) Expr() string { return s.expr }

// Zone is the IANA zone the spec fires in; "" means the host's zone.
func (s Spec) Zone() string { return s.zone }

// HasSeconds reports whether the spec has a seconds field.
func (s Spec) HasSeconds() bool { return s.hasSeconds }

// Schedule returns the spec as a robfig/cron schedule in its zone (the
// host's when it has none).
func (s Spec) Schedule() cron.Schedule {
	sched := *s.sched
	sched.Location = time.Local
	if s.loc != nil {
		sched.Location = s.loc
	}
	return &sched
}

// intervalHorizon bounds the firings Interval looks at: enough to cover a
// full year of an hourly spec, and any spec's pattern within leap years.
const intervalHorizon = 10000

// Interval is the shortest gap between two consecutive firings. It is
// computed in UTC from a fixed instant so generated files are reproducible.
func (s Spec) Interval() time.Duration {
	sched := *s.sched
	sched.Location = time.UTC
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(4, 0, 0)
	prev := sched.Next(start.Add(-time.Second))
	shortest := time.Duration(0)
	for range intervalHorizon {
		next := sched.Next(prev)
		if next.IsZero() || next.After(end) {
			break
		}
		if gap := next.Sub(prev); shortest == 0 || gap < shortest {
			shortest = gap
		}
		prev = next
	}
	if shortest == 0 {
		// Fires at most once in four years (e.g. 29 February): treat as yearly.
		shortest = 366 * 24 * time.Hour
	}
	return shortest
}

// Margins for a tick's --max-duration. The margin leaves time to finish or
// release in-flight rows and exit before the next firing; the floor keeps a
// tick long enough to claim and work a batch at all.
const (
	MaxDurationMarginDefault = 10 * time.Second
	MaxDurationFloorDefault  = 5 * time.Second
)

// MaxDuration is the --max-duration a tick on this spec gets: its interval
// minus MaxDurationMarginDefault, or half the interval when that would fall
// under MaxDurationFloorDefault, so a tick normally ends before the next one
// starts. Whole seconds, at least one.
func (s Spec) MaxDuration() time.Duration {
	interval := s.Interval()
	d := interval - MaxDurationMarginDefault
	if d < MaxDurationFloorDefault {
		d = interval / 2
	}
	return max(d.Truncate(time.Second), time.Second)
}
