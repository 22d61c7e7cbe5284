// Package tickkind names the kinds of tick: the bounded batch commands a
// scheduler runs. It imports nothing of the project, so the store
// (tick_runs.kind), the tick runner, status and schedule share one type.
package tickkind

import "fmt"

// Kind names a tick, as stored in tick_runs.kind.
type Kind string

const (
	Enrich Kind = "enrich"
	Email  Kind = "email"
	Events Kind = "events"
	Inbox  Kind = "inbox"
	Prune  Kind = "prune"
)

// All lists every kind in the order units are generated and started and
// reports show them; the database's CHECK constraint allows exactly these
// (schema test).
var All = []Kind{Enrich, Email, Events, Inbox, Prune}

// Args are the rindactl arguments that run one tick of the kind.
func (k Kind) Args() []string {
	switch k {
	case Enrich:
		return []string{"enrich", "tick"}
	case Email:
		return []string{"email", "tick"}
	case Events:
		return []string{"events", "deliver"}
	case Inbox:
		return []string{"inbox", "tick"}
	case Prune:
		return []string{"prune"}
	}
	panic(fmt.Sprintf("tickkind: unknown tick kind %q", string(k)))
}

// Background reports whether the kind yields CPU to the others: enrichment
// must never slow the email ticks down (the incident's starvation), and
// neither must deleting old history.
func (k Kind) Background() bool { return k == Enrich || k == Prune }
