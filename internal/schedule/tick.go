package schedule

import (
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/tickkind"
)

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
