package schedule

import (
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/tickkind"
)

// SpecPruneDefault fires prune hourly, at a minute away from the top of
// the hour where other cron jobs crowd: history grows by the hour, and
// each run deletes what aged past its keep since the last.
const SpecPruneDefault = "17 * * * *"

// DefaultSpec is the spec `schedule print` and `run` give kind unless told.
func DefaultSpec(kind tickkind.Kind) string {
	if kind == tickkind.Prune {
		return SpecPruneDefault
	}
	return SpecDefault
}

// Tick is one kind of tick on its spec.
type Tick struct {
	Kind tickkind.Kind
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
