package tick_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/tick"
)

type settings struct {
	Batch     int
	Wait      time.Duration
	Ratio     float64
	Name      string
	Logger    *slog.Logger
	Now       func() time.Time
	Signed    int // no default: a negative value is the caller's to keep
	unexposed int
}

func TestDefaultsFillsUnsetFieldsOnly(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	def := settings{Batch: 200, Wait: time.Minute, Ratio: 0.5, Name: "tick", Logger: log, Now: time.Now, unexposed: 9}

	got := settings{Batch: -3, Signed: -1}
	tick.Defaults(&got, def)
	if got.Batch != 200 || got.Wait != time.Minute || got.Ratio != 0.5 || got.Name != "tick" || got.Logger != log || got.Now == nil {
		t.Fatalf("unset fields not defaulted: %+v", got)
	}
	if got.Signed != -1 || got.unexposed != 0 {
		t.Fatalf("fields without a default changed: Signed=%d unexposed=%d", got.Signed, got.unexposed)
	}

	set := settings{Batch: 7, Wait: time.Second, Ratio: 0.1, Name: "mine"}
	tick.Defaults(&set, def)
	if set.Batch != 7 || set.Wait != time.Second || set.Ratio != 0.1 || set.Name != "mine" {
		t.Fatalf("set fields overwritten: %+v", set)
	}
}
