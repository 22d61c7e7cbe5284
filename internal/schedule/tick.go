package schedule

import (
	"fmt"
	"time"
)

// Kind names a tick: one batch command that a scheduler runs on a spec.
type Kind string

const (
	KindEnrich Kind = "enrich"
	KindEmail  Kind = "email"
	KindEvents Kind = "events"
	KindInbox  Kind = "inbox"
)

// Kinds lists every tick in the order units are generated and started.
var Kinds = []Kind{KindEnrich, KindEmail, KindEvents, KindInbox}

// Args are the rindactl arguments that run one tick of the kind.
func (k Kind) Args() []string {
	switch k {
	case KindEnrich:
		return []string{"enrich", "tick"}
	case KindEmail:
		return []string{"email", "tick"}
	case KindEvents:
		return []string{"events", "deliver"}
	case KindInbox:
		return []string{"inbox", "tick"}
	}
	panic(fmt.Sprintf("schedule: unknown tick kind %q", string(k)))
}

// Background reports whether the kind yields CPU to the others: enrichment
// must never slow the email ticks down (the incident's starvation).
func (k Kind) Background() bool { return k == KindEnrich }

// Tick is one kind of tick on its spec.
type Tick struct {
	Kind Kind
	Spec Spec
}

// MaxDuration is the --max-duration the tick runs with.
func (t Tick) MaxDuration() time.Duration { return t.Spec.MaxDuration() }

// Command is the tick's argv after the binary: its subcommand and a
// --max-duration that ends it before its next firing.
func (t Tick) Command() []string {
	return append(t.Kind.Args(), "--max-duration="+formatSeconds(t.MaxDuration()))
}

// formatSeconds writes a whole-second duration the way both Go flags and
// systemd accept it ("50s", "3600s").
func formatSeconds(d time.Duration) string {
	return fmt.Sprintf("%ds", int64(d/time.Second))
}
