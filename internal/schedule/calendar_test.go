package schedule

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// calendarCases pair cron specs with the OnCalendar expressions they
// translate to; TestOnCalendarMatchesSystemd checks each pair fires at the
// same instants under systemd itself.
var calendarCases = []struct {
	spec    string
	seconds bool
	want    string
}{
	{spec: "* * * * *", want: "*-*-* *:*:00"},
	{spec: "*/15 * * * *", want: "*-*-* *:00/15:00"},
	{spec: "5/20 * * * *", want: "*-*-* *:05/20:00"},
	{spec: "10-40/10 * * * *", want: "*-*-* *:10..40/10:00"},
	{spec: "0 9-17/2 * * 1-5", want: "Mon..Fri *-*-* 09..17/2:00:00"},
	{spec: "0,30 8-12,14 * * *", want: "*-*-* 08..12,14:00,30:00"},
	{spec: "0 0 1,15 * *", want: "*-*-01,15 00:00:00"},
	{spec: "0 0 */2 * *", want: "*-*-01/2 00:00:00"},
	{spec: "0 12 * 1-3,6 SUN", want: "Sun *-01..03,06-* 12:00:00"},
	{spec: "30 4 * * 0,6", want: "Sat,Sun *-*-* 04:30:00"},
	{spec: "15 10 * * 0-3", want: "Mon..Wed,Sun *-*-* 10:15:00"},
	{spec: "0 0 1 1 *", want: "*-01-01 00:00:00"},
	{spec: "@weekly", want: "Sun *-*-* 00:00:00"},
	{spec: "0 6 1-31 * 1", want: "*-*-* 06:00:00"}, // cron ORs the days; all days of the month match
	{spec: "0 0 ? * 1", want: "Mon *-*-* 00:00:00"},
	{spec: "*/10 * * * * *", seconds: true, want: "*-*-* *:*:00/10"},
	{spec: "1,2,3,7 0 * * *", want: "*-*-* 00:01..03,07:00"},
	{spec: "CRON_TZ=Asia/Seoul 0 9 * * 1-5", want: "Mon..Fri *-*-* 09:00:00 Asia/Seoul"},
}

func parseCase(t *testing.T, spec string, seconds bool) Spec {
	t.Helper()
	parse := Parse
	if seconds {
		parse = ParseWithSeconds
	}
	s, err := parse(spec)
	if err != nil {
		t.Fatalf("Parse(%q): %v", spec, err)
	}
	return s
}

func TestOnCalendar(t *testing.T) {
	t.Parallel()
	for _, tt := range calendarCases {
		got, err := parseCase(t, tt.spec, tt.seconds).OnCalendar()
		if err != nil {
			t.Errorf("%q: OnCalendar: %v", tt.spec, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%q: OnCalendar() = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

func TestOnCalendarRejectsDaysCronORs(t *testing.T) {
	t.Parallel()
	_, err := parseCase(t, "0 0 1 * 1", false).OnCalendar()
	var specErr *SpecError
	if !errors.As(err, &specErr) {
		t.Fatalf("OnCalendar error = %v, want a *SpecError", err)
	}
	if specErr.Field != "day-of-week" || !strings.Contains(specErr.Reason, "ORs") || !strings.Contains(err.Error(), `"0 0 1 * 1"`) {
		t.Errorf("error %q should name the spec, the day-of-week field and the OR", err)
	}
}

var elapseLine = regexp.MustCompile(`(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC`)

// TestOnCalendarMatchesSystemd asks systemd for the next firings of each
// translated expression and compares them with robfig/cron's.
func TestOnCalendarMatchesSystemd(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (apt-get install systemd); translation equivalence unchecked")
	}
	const iterations = 25
	base := time.Date(2026, time.January, 1, 0, 0, 30, 0, time.UTC) // between firings of every case
	for _, tt := range calendarCases {
		t.Run(tt.spec, func(t *testing.T) {
			t.Parallel()
			spec := parseCase(t, tt.spec, tt.seconds)
			cal, err := spec.OnCalendar()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, analyze, "calendar", "--iterations="+strconv.Itoa(iterations),
				"--base-time="+base.Format("2006-01-02 15:04:05 UTC"), cal)
			cmd.Env = append(os.Environ(), "TZ=UTC", "SYSTEMD_COLORS=0")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("systemd-analyze calendar %q: %v\n%s", cal, err, out)
			}
			var got []string
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if m := elapseLine.FindStringSubmatch(sc.Text()); m != nil {
					got = append(got, m[1])
				}
			}
			sched := *spec.sched
			sched.Location = time.UTC
			if spec.loc != nil {
				sched.Location = spec.loc
			}
			next := base
			for i := range iterations {
				next = sched.Next(next)
				want := next.UTC().Format("2006-01-02 15:04:05")
				if i >= len(got) {
					t.Fatalf("systemd listed %d firings, want %d:\n%s", len(got), iterations, out)
				}
				if got[i] != want {
					t.Fatalf("firing %d of %q: systemd %s, robfig/cron %s (OnCalendar=%s)", i+1, tt.spec, got[i], want, cal)
				}
			}
		})
	}
}
