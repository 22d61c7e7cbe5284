package providerspec_test

import (
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

func TestParseRate(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"20/s": 50 * time.Millisecond, "500/m": 120 * time.Millisecond, "3600/h": time.Second} {
		r, err := providerspec.ParseRate(in)
		if err != nil || r.Interval() != want {
			t.Errorf("ParseRate(%q) interval = %s, %v; want %s", in, r.Interval(), err, want)
		}
	}
	for _, bad := range []string{"", "20", "x/s", "20/d", "-1/s"} {
		if _, err := providerspec.ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
	if r, err := providerspec.ParseRate("off"); err != nil || r.Enabled() {
		t.Errorf("off: %+v %v", r, err)
	}
}
