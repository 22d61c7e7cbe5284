package tick_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/tick"
)

// Issue 27: one lease rule for every tick kind. A default lease grows to
// outlast --max-duration plus the kind's grace; an explicit one that does
// not is refused, naming the least lease that works.
func TestFitLease(t *testing.T) {
	t.Parallel()
	smtp := tick.Grace{Duration: time.Second, What: "the 1s SMTP grace"}
	for _, tc := range []struct {
		name        string
		lease       time.Duration
		explicit    bool
		maxDuration time.Duration
		want        time.Duration
		wantErr     string
	}{
		{"default fits", 5 * time.Minute, false, 50 * time.Second, 5 * time.Minute, ""},
		{"default grows for */10", 5 * time.Minute, false, 590 * time.Second, 590*time.Second + time.Second + tick.LeaseMargin, ""},
		{"default grows for @hourly", 5 * time.Minute, false, 3590 * time.Second, 3591*time.Second + tick.LeaseMargin, ""},
		{"default at the edge grows", 51 * time.Second, false, 50 * time.Second, 51*time.Second + tick.LeaseMargin, ""},
		{"explicit fits", 52 * time.Second, true, 50 * time.Second, 52 * time.Second, ""},
		{"explicit too short", 5 * time.Minute, true, 590 * time.Second, 0, "--lease 5m0s must exceed --max-duration 9m50s plus the 1s SMTP grace: use --lease 9m52s or more"},
		{"explicit equal", 51 * time.Second, true, 50 * time.Second, 0, "use --lease 52s or more"},
	} {
		got, err := tick.FitLease(tc.lease, tc.explicit, tc.maxDuration, smtp)
		var le *tick.LeaseError
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (!errors.As(err, &le) || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: err = %v, want a LeaseError containing %q", tc.name, err, tc.wantErr)
		case got != tc.want:
			t.Errorf("%s: lease %s, want %s", tc.name, got, tc.want)
		}
	}
}
