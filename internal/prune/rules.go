// Package prune keeps the tables that only grow (sends, the provider_calls
// ledger, events, tick_runs, audit_log, finished enrollments) to what the
// product reads: a retention rule per table, a --keep per table that can
// lengthen it but never cut into what caps, ceilings, `why`, `status` and
// `doctor` need, and the `rindactl prune` tick that applies them in small
// batches by key.
package prune

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Table names a table that only grows.
type Table string

const (
	Sends         Table = "sends"
	ProviderCalls Table = "provider_calls"
	Events        Table = "events"
	TickRuns      Table = "tick_runs"
	AuditLog      Table = "audit_log"
	Enrollments   Table = "enrollments"
)

// Forever keeps a table's rows: it is not pruned.
const Forever = time.Duration(math.MaxInt64)

const day = 24 * time.Hour

// Rule is one table's retention.
type Rule struct {
	Table Table
	// Default is how long rows are kept when --keep does not name the
	// table (Forever: the table is pruned only when asked).
	Default time.Duration
	// Floor is the shortest keep allowed, and Needs says who reads the
	// rows inside it.
	Floor time.Duration
	Needs string
	// Always are the rows kept whatever their age.
	Always string
}

// Rules lists every table's rule, in the order prune reports them.
var Rules = []Rule{
	{Table: Sends, Default: 90 * day, Floor: 30 * day,
		Needs:  "mailbox caps count the last 24 hours, warm-up ramps look a week past their period, and bounces are matched to the sends of the last 30 days",
		Always: "sends of active, failed and delivery_unknown enrollments (threads, reply matching, requeue), unsettled sends, and each mailbox's newest 200 that reached a server (the bounce-rate guard's window)"},
	{Table: ProviderCalls, Default: 90 * day, Floor: 62 * day,
		Needs:  "the spend ceiling and 'status' read the current and the previous UTC month",
		Always: "reserved calls (their settle or refund is still to come)"},
	{Table: Events, Default: 90 * day, Floor: 35 * day,
		Needs:  "a ceiling_reached alert is keyed by its month: deleted within it, it would be posted again",
		Always: "alerts not yet delivered, and the events of an open breaker's episode"},
	{Table: TickRuns, Default: 30 * day, Floor: 2 * day,
		Needs:  "'status' counts the runs of the last 24 hours and 'doctor' looks there for crashed runs",
		Always: "each kind's newest run, newest 16 successes and newest failure"},
	{Table: AuditLog, Default: Forever, Floor: 30 * day,
		Needs:  "operators read recent actions; the tick role may not delete them (prune them as the schema owner)",
		Always: "nothing else"},
	{Table: Enrollments, Default: Forever, Floor: 30 * day,
		Needs:  "their sends go with them (as for sends); the tick role may not delete them (prune them as the schema owner)",
		Always: "active, failed and delivery_unknown enrollments"},
}

// RuleOf returns the rule of table t.
func RuleOf(t Table) (Rule, bool) {
	i := slices.IndexFunc(Rules, func(r Rule) bool { return r.Table == t })
	if i < 0 {
		return Rule{}, false
	}
	return Rules[i], true
}

// Keeps is how long each table keeps its rows; a table it does not name
// keeps its Rule's Default.
type Keeps map[Table]time.Duration

// Of is how long table t keeps its rows.
func (k Keeps) Of(t Table) time.Duration {
	if d, ok := k[t]; ok {
		return d
	}
	r, _ := RuleOf(t)
	return r.Default
}

// ParseKeeps reads --keep TABLE=DURATION values: DURATION is a number of
// days ("90d"), a Go duration ("36h"), or "forever". A table named twice
// keeps its last value. A keep shorter than the table's Floor is refused,
// naming what reads those rows.
func ParseKeeps(specs []string) (Keeps, error) {
	keeps := Keeps{}
	for _, spec := range specs {
		name, value, ok := strings.Cut(spec, "=")
		if !ok {
			return nil, fmt.Errorf("--keep %q: use TABLE=DURATION, e.g. sends=120d", spec)
		}
		rule, ok := RuleOf(Table(strings.TrimSpace(name)))
		if !ok {
			return nil, fmt.Errorf("--keep %q: unknown table %q; use one of %s", spec, name, tableNames())
		}
		d, err := ParseDuration(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("--keep %q: %v", spec, err)
		}
		if d < rule.Floor {
			return nil, fmt.Errorf("--keep %q: %s keeps at least %s, because %s; use %s or more",
				spec, rule.Table, FormatDuration(rule.Floor), rule.Needs, FormatDuration(rule.Floor))
		}
		keeps[rule.Table] = d
	}
	return keeps, nil
}

// ParseDuration reads "90d", a Go duration ("36h") or "forever".
func ParseDuration(s string) (time.Duration, error) {
	if s == "forever" {
		return Forever, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 1 || days > 36500 {
			return 0, fmt.Errorf("invalid duration %q: use whole days like 90d, hours like 36h, or forever", s)
		}
		return time.Duration(days) * day, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid duration %q: use whole days like 90d, hours like 36h, or forever", s)
	}
	return d, nil
}

// FormatDuration writes a keep the way ParseDuration reads it: whole days
// as "90d", "forever", else Go's form.
func FormatDuration(d time.Duration) string {
	switch {
	case d == Forever:
		return "forever"
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}

func tableNames() string {
	names := make([]string, len(Rules))
	for i, r := range Rules {
		names[i] = string(r.Table)
	}
	return strings.Join(names, ", ")
}

// cutoff is the instant before which table t's rows may go, counted back
// from now; false when the table keeps its rows forever. The ledger never
// loses a row of the previous or current UTC month, whatever the keep.
func cutoff(t Table, keep time.Duration, now time.Time) (time.Time, bool) {
	if keep == Forever {
		return time.Time{}, false
	}
	c := now.Add(-keep)
	if t == ProviderCalls {
		u := now.UTC()
		c = minTime(c, time.Date(u.Year(), u.Month()-1, 1, 0, 0, 0, 0, time.UTC))
	}
	return c, true
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
