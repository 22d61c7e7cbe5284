package schedule

import (
	"fmt"
	"strings"
)

// weekdayNames are systemd's weekday names in robfig's numbering (0 = Sunday).
var weekdayNames = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// OnCalendar translates the spec into a systemd OnCalendar= expression that
// fires at the same instants. It works from the parsed value sets, so lists,
// ranges and steps all come out right; it fails only where systemd has no
// equivalent: cron fires when day-of-month OR day-of-week matches if both are
// restricted, while systemd requires both.
func (s Spec) OnCalendar() (string, error) {
	sc := s.sched
	dom, dow := sc.Dom, sc.Dow
	if dom&starBit == 0 && dow&starBit == 0 {
		switch {
		case isFull(dom, 1, 31) || isFull(dow, 0, 6):
			// Either side matching every day makes the OR match every day.
			dom, dow = fullSet(1, 31), fullSet(0, 6)
		default:
			return "", &SpecError{Spec: s.text, Field: "day-of-week", Reason: fmt.Sprintf(
				"%q together with day-of-month %q fires on either (cron ORs them) and systemd OnCalendar can only AND them; restrict one of the two and use * for the other",
				s.fields[5], s.fields[3])}
		}
	}

	var b strings.Builder
	if !isFull(dow, 0, 6) {
		b.WriteString(weekdays(dow))
		b.WriteByte(' ')
	}
	fmt.Fprintf(&b, "*-%s-%s %s:%s:%s",
		values(sc.Month, 1, 12), values(dom, 1, 31),
		values(sc.Hour, 0, 23), values(sc.Minute, 0, 59), values(sc.Second, 0, 59))
	if s.zone != "" {
		b.WriteString(" " + s.zone) // systemd 235+ reads a trailing IANA zone
	}
	return b.String(), nil
}

func fullSet(lo, hi uint) uint64 {
	var set uint64
	for v := lo; v <= hi; v++ {
		set |= 1 << v
	}
	return set
}

func isFull(set uint64, lo, hi uint) bool {
	full := fullSet(lo, hi)
	return set&full == full
}

func members(set uint64, lo, hi uint) []uint {
	var out []uint
	for v := lo; v <= hi; v++ {
		if set&(1<<v) != 0 {
			out = append(out, v)
		}
	}
	return out
}

// values renders one numeric calendar component: "*", "start/step" for a
// progression that runs to the end of the field, "a..b/step" for one that
// stops early, or a list whose runs of three or more become "a..b".
func values(set uint64, lo, hi uint) string {
	if isFull(set, lo, hi) {
		return "*"
	}
	vs := members(set, lo, hi)
	if step, ok := progression(vs); ok {
		first, last := vs[0], vs[len(vs)-1]
		if last+step > hi {
			return fmt.Sprintf("%02d/%d", first, step)
		}
		return fmt.Sprintf("%02d..%02d/%d", first, last, step)
	}
	var parts []string
	for _, run := range runs(vs) {
		switch {
		case len(run) >= 3:
			parts = append(parts, fmt.Sprintf("%02d..%02d", run[0], run[len(run)-1]))
		default:
			for _, v := range run {
				parts = append(parts, fmt.Sprintf("%02d", v))
			}
		}
	}
	return strings.Join(parts, ",")
}

// progression reports whether vs (sorted, at least three values) is evenly
// spaced by a step greater than one.
func progression(vs []uint) (uint, bool) {
	if len(vs) < 3 {
		return 0, false
	}
	step := vs[1] - vs[0]
	if step < 2 {
		return 0, false
	}
	for i := 2; i < len(vs); i++ {
		if vs[i]-vs[i-1] != step {
			return 0, false
		}
	}
	return step, true
}

// runs splits sorted values into maximal runs of consecutive numbers.
func runs(vs []uint) [][]uint {
	var out [][]uint
	for i, v := range vs {
		if i > 0 && v == vs[i-1]+1 {
			out[len(out)-1] = append(out[len(out)-1], v)
			continue
		}
		out = append(out, []uint{v})
	}
	return out
}

// weekdays renders the day-of-week set Monday first, as systemd orders the
// week, so Sunday never sits inside a range ("Mon..Fri", "Sat,Sun").
func weekdays(set uint64) string {
	var monFirst []uint // 0 = Monday .. 6 = Sunday
	for d := range uint(7) {
		if set&(1<<((d+1)%7)) != 0 {
			monFirst = append(monFirst, d)
		}
	}
	name := func(d uint) string { return weekdayNames[(d+1)%7] }
	var parts []string
	for _, run := range runs(monFirst) {
		if len(run) >= 3 {
			parts = append(parts, name(run[0])+".."+name(run[len(run)-1]))
			continue
		}
		for _, d := range run {
			parts = append(parts, name(d))
		}
	}
	return strings.Join(parts, ",")
}
