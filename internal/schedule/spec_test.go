package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/tickkind"
)

func TestParseRejectsBadSpecNamingFieldAndReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec        string
		seconds     bool
		field       string
		reasonParts []string
	}{
		{spec: "61 * * * *", field: "minute", reasonParts: []string{`"61"`, "above maximum (59)"}},
		{spec: "* 24 * * *", field: "hour", reasonParts: []string{"above maximum (23)"}},
		{spec: "0 0 0 * *", field: "day-of-month", reasonParts: []string{"below minimum (1)"}},
		{spec: "0 0 * 13 *", field: "month", reasonParts: []string{"above maximum (12)"}},
		{spec: "0 0 * * 7", field: "day-of-week", reasonParts: []string{"above maximum (6)"}},
		{spec: "0 0 * * MON-FOO", field: "day-of-week", reasonParts: []string{"FOO"}},
		{spec: "10-5 * * * *", field: "minute", reasonParts: []string{"beyond end of range"}},
		{spec: "*/0 * * * *", field: "minute", reasonParts: []string{"positive"}},
		{spec: "60 * * * * *", seconds: true, field: "second", reasonParts: []string{"above maximum (59)"}},
		{spec: "* * * *", reasonParts: []string{"expected 5 fields", "found 4"}},
		{spec: "* * * * * *", reasonParts: []string{"expected 5 fields", "found 6"}},
		{spec: "* * * * * * *", seconds: true, reasonParts: []string{"or 6 with a leading second", "found 7"}},
		{spec: "", reasonParts: []string{"empty"}},
		{spec: "@every 1m", reasonParts: []string{"unknown descriptor"}},
		{spec: "CRON_TZ=Mars/Olympus * * * * *", reasonParts: []string{"unknown time zone", "IANA"}},
		{spec: "TZ=Local * * * * *", reasonParts: []string{"unknown time zone"}},
		{spec: "0 0 30 2 *", reasonParts: []string{"never fires"}},
		{spec: "0 0 */2 * 1", field: "day-of-month", reasonParts: []string{"Vixie cron", "robfig/cron"}},
		{spec: "0 0 1 * */2", field: "day-of-week", reasonParts: []string{"Vixie cron"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			t.Parallel()
			parse := Parse
			if tt.seconds {
				parse = ParseWithSeconds
			}
			_, err := parse(tt.spec)
			var specErr *SpecError
			if !errors.As(err, &specErr) {
				t.Fatalf("Parse(%q) error = %v, want a *SpecError", tt.spec, err)
			}
			if specErr.Field != tt.field {
				t.Errorf("field = %q, want %q (error: %v)", specErr.Field, tt.field, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, `cron spec "`+tt.spec+`"`) {
				t.Errorf("error %q does not quote the spec", msg)
			}
			for _, part := range tt.reasonParts {
				if !strings.Contains(specErr.Reason, part) {
					t.Errorf("reason %q does not contain %q", specErr.Reason, part)
				}
			}
		})
	}
}

func TestParseAcceptsStandardSpecs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec    string
		seconds bool
		want    string // normalised text
	}{
		{spec: "* * * * *", want: "* * * * *"},
		{spec: "  */5   9-17 * *  MON-FRI ", want: "*/5 9-17 * * MON-FRI"},
		{spec: "0 0 1,15 * *", want: "0 0 1,15 * *"},
		{spec: "@hourly", want: "@hourly"},
		{spec: "*/10 * * * * *", seconds: true, want: "*/10 * * * * *"},
		{spec: "* * * * *", seconds: true, want: "* * * * *"},
	}
	for _, tt := range tests {
		parse := Parse
		if tt.seconds {
			parse = ParseWithSeconds
		}
		spec, err := parse(tt.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		if spec.String() != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.spec, spec.String(), tt.want)
		}
		if spec.HasSeconds() != (len(strings.Fields(tt.want)) == 6) {
			t.Errorf("Parse(%q).HasSeconds() = %v", tt.spec, spec.HasSeconds())
		}
	}
}

func TestIntervalAndMaxDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec        string
		interval    time.Duration
		maxDuration time.Duration
	}{
		{"* * * * *", time.Minute, 50 * time.Second},
		{"*/5 * * * *", 5 * time.Minute, 290 * time.Second},
		{"0,1 * * * *", time.Minute, 50 * time.Second}, // shortest gap, not the average
		{"*/5 9-17 * * 1-5", 5 * time.Minute, 290 * time.Second},
		{"@hourly", time.Hour, time.Hour - 10*time.Second},
		{"0 0 * * 1-5", 24 * time.Hour, 24*time.Hour - 10*time.Second},
		{"* * * * * *", time.Second, time.Second},             // half of 1s, floored at 1s
		{"*/12 * * * * *", 12 * time.Second, 6 * time.Second}, // 12s-10s is under the 5s floor: half
		{"*/20 * * * * *", 20 * time.Second, 10 * time.Second},
	}
	for _, tt := range tests {
		spec, err := ParseWithSeconds(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := spec.Interval(); got != tt.interval {
			t.Errorf("%q: Interval() = %v, want %v", tt.spec, got, tt.interval)
		}
		if got := spec.MaxDuration(); got != tt.maxDuration {
			t.Errorf("%q: MaxDuration() = %v, want %v", tt.spec, got, tt.maxDuration)
		}
		if got := spec.MaxDuration(); got >= spec.Interval() && spec.Interval() > time.Second {
			t.Errorf("%q: MaxDuration() %v is not below the interval %v", tt.spec, got, spec.Interval())
		}
	}
}

func TestTickCommand(t *testing.T) {
	t.Parallel()
	spec, err := Parse("*/2 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	want := map[tickkind.Kind]string{
		tickkind.Enrich: "enrich tick --max-duration=110s",
		tickkind.Email:  "email tick --max-duration=110s",
		tickkind.Events: "events deliver --max-duration=110s",
		tickkind.Inbox:  "inbox tick --max-duration=110s",
		tickkind.Prune:  "prune --max-duration=110s",
	}
	for _, kind := range tickkind.All {
		got := strings.Join(Tick{Kind: kind, Spec: spec}.Command(), " ")
		if got != want[kind] {
			t.Errorf("%s: Command() = %q, want %q", kind, got, want[kind])
		}
	}
}

// Issue 16: a spec may carry its zone (CRON_TZ=Zone or TZ=Zone first); it
// fires in that zone, and Expr and Zone hand the parts to the generators.
func TestParseTimeZonePrefix(t *testing.T) {
	t.Parallel()
	spec, err := Parse("CRON_TZ=Asia/Seoul 0 9 * * 1-5")
	if err != nil {
		t.Fatal(err)
	}
	if spec.Zone() != "Asia/Seoul" || spec.Expr() != "0 9 * * 1-5" || spec.String() != "CRON_TZ=Asia/Seoul 0 9 * * 1-5" {
		t.Fatalf("zone %q expr %q string %q", spec.Zone(), spec.Expr(), spec.String())
	}
	// Friday 2026-06-05 00:30 UTC is 09:30 in Seoul: the next firing is
	// Monday 09:00 Seoul, Monday 00:00 UTC.
	next := spec.Schedule().Next(time.Date(2026, 6, 5, 0, 30, 0, 0, time.UTC))
	if want := time.Date(2026, 6, 8, 0, 0, 0, 0, time.UTC); !next.Equal(want) {
		t.Errorf("next firing %s, want %s", next.UTC(), want)
	}
	if d, err := Parse("TZ=UTC @daily"); err != nil || d.Zone() != "UTC" || d.Expr() != "@daily" {
		t.Errorf("TZ=UTC @daily: %v %q %q", err, d.Zone(), d.Expr())
	}
}

// A spec's fields on their own: five or, where allowed, six; a
// descriptor expanded; anything else refused with the count found.
func TestSpecFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr    string
		seconds bool
		want    string // the six fields joined; "" when refused
		hasSecs bool
	}{
		{"*/5 * * * *", false, "0 */5 * * * *", false},
		{"@hourly", false, "0 0 * * * *", false},
		{"30 */5 * * * *", true, "30 */5 * * * *", true},
		{"30 */5 * * * *", false, "", false},
		{"* * * *", true, "", false},
		{"@sometimes", false, "", false},
	} {
		fields, hasSecs, serr := specFields(tc.expr, tc.seconds)
		got := ""
		if serr == nil {
			got = strings.Join(fields[:], " ")
		}
		if got != tc.want || hasSecs != tc.hasSecs {
			t.Errorf("specFields(%q, %v) = %q %v (%v), want %q %v", tc.expr, tc.seconds, got, hasSecs, serr, tc.want, tc.hasSecs)
		}
	}
}
