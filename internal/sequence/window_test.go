package sequence

import (
	"testing"
	"time"
)

func TestWindowNext(t *testing.T) {
	t.Parallel()
	business, err := NewWindow(LeadTimezone, []string{"mon", "tue", "wed", "thu", "fri"}, "09:00", "17:00")
	if err != nil {
		t.Fatal(err)
	}
	paris, err := NewWindow("Europe/Paris", []string{"mon", "tue", "wed", "thu", "fri"}, "09:00", "17:00")
	if err != nil {
		t.Fatal(err)
	}
	seoul, _ := time.LoadLocation("Asia/Seoul")
	ny, _ := time.LoadLocation("America/New_York")
	at := func(loc *time.Location, s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		name   string
		w      *Window
		t      time.Time
		leadTZ string
		want   time.Time
	}{
		{"inside stays", business, at(seoul, "2026-12-02 10:30"), "Asia/Seoul", at(seoul, "2026-12-02 10:30")},
		{"before start moves to start", business, at(seoul, "2026-12-02 06:00"), "Asia/Seoul", at(seoul, "2026-12-02 09:00")},
		{"at end moves to next day", business, at(seoul, "2026-12-02 17:00"), "Asia/Seoul", at(seoul, "2026-12-03 09:00")},
		{"friday evening moves to monday", business, at(seoul, "2026-12-04 18:00"), "Asia/Seoul", at(seoul, "2026-12-07 09:00")},
		{"saturday moves to monday", business, at(seoul, "2026-12-05 11:00"), "Asia/Seoul", at(seoul, "2026-12-07 09:00")},
		// 10:00 in Seoul on Wednesday is 20:00 Tuesday in New York.
		{"lead timezone decides", business, at(seoul, "2026-12-02 10:00"), "America/New_York", at(ny, "2026-12-02 09:00")},
		{"unknown lead zone is UTC", business, at(time.UTC, "2026-12-02 08:00"), "Nowhere/Land", at(time.UTC, "2026-12-02 09:00")},
		{"campaign zone ignores lead", paris, at(time.UTC, "2026-12-02 07:30"), "Asia/Seoul", at(time.UTC, "2026-12-02 08:00")},
		// DST starts in Paris on 2026-03-29: 09:00 local stays 09:00 local.
		{"dst keeps wall clock", paris, at(time.UTC, "2026-03-27 17:00"), "", time.Date(2026, 3, 30, 7, 0, 0, 0, time.UTC)},
		{"nil window is always open", nil, at(seoul, "2026-12-05 03:00"), "Asia/Seoul", at(seoul, "2026-12-05 03:00")},
	}
	for _, tc := range cases {
		got := tc.w.Next(tc.t, tc.leadTZ)
		if !got.Equal(tc.want) {
			t.Errorf("%s: Next(%s) = %s, want %s", tc.name, tc.t, got, tc.want)
		}
	}
}

func TestWindowRoundTrip(t *testing.T) {
	t.Parallel()
	w, err := NewWindow("UTC", []string{"fri", "mon"}, "08:30", "24:00")
	if err != nil {
		t.Fatal(err)
	}
	if got := w.DayNames(); len(got) != 2 || got[0] != "mon" || got[1] != "fri" {
		t.Errorf("DayNames = %v", got)
	}
	if Clock(w.Start) != "08:30" || Clock(w.End) != "24:00" {
		t.Errorf("clock = %s-%s", Clock(w.Start), Clock(w.End))
	}
}
