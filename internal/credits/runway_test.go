package credits_test

import (
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/credits"
)

func TestRunwayAndItsWords(t *testing.T) {
	t.Parallel()
	if _, ok := credits.Runway(100, 0); ok {
		t.Error("a runway without a pace")
	}
	if d, ok := credits.Runway(600, 120); !ok || d != 5*time.Hour {
		t.Errorf("600 credits at 120/h: %s, want 5h", d)
	}
	for d, want := range map[time.Duration]string{
		0:                               "out of credits",
		30 * time.Second:                "under a minute",
		40 * time.Minute:                "about 40 m",
		3*time.Hour + 10*time.Minute:    "about 3 h 10 m",
		52*time.Hour + 20*time.Minute:   "about 2 d 4 h",
		time.Hour - 10*time.Second:      "about 60 m",
		47*time.Hour + 59*time.Minute:   "about 47 h 59 m",
		10*24*time.Hour + 2*time.Minute: "about 10 d 0 h",
	} {
		if got := credits.FormatRunway(d); got != want {
			t.Errorf("FormatRunway(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"RINDA_CREDITS_REFRESH": "10m", "RINDA_HUNTER_RUNWAY_ALERT": "12h", "RINDA_FINDYMAIL_RUNWAY_ALERT": "off"}
	c, err := credits.ConfigFromEnv(func(k string) string { return env[k] }, "hunter", "findymail", "millionverifier")
	if err != nil || c.Every != 10*time.Minute || c.AlertUnder("hunter") != 12*time.Hour || c.AlertUnder("findymail") != 0 ||
		c.AlertUnder("millionverifier") != credits.RunwayAlertDefault {
		t.Fatalf("config %+v, %v", c, err)
	}
	for k, v := range map[string]string{"RINDA_CREDITS_REFRESH": "10s", "RINDA_HUNTER_RUNWAY_ALERT": "soon"} {
		if _, err := credits.ConfigFromEnv(func(name string) string {
			if name == k {
				return v
			}
			return ""
		}, "hunter"); err == nil {
			t.Errorf("%s=%q accepted", k, v)
		}
	}
}
