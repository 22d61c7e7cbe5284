package sequence

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// noonZone is a fixed-offset zone where it is about noon now, so a window
// from 00:00 to two hours from now is open, and four hours from now is
// shut until midnight, whenever the test runs.
func noonZone(now time.Time) (zone string, end string) {
	offset := 12 - now.UTC().Hour() // -11..12
	// Etc/GMT names carry the inverted sign: Etc/GMT-3 is UTC+3.
	zone = fmt.Sprintf("Etc/GMT%+d", -offset)
	if offset == 0 {
		zone = "UTC"
	}
	local := now.In(time.FixedZone("", offset*3600))
	return zone, Clock(local.Hour()*60 + local.Minute() + 120)
}

// The fourth finding: a window ending at 14:20 UTC, status at
// 14:20:14 said "outside window 20", and the next email tick sent all 20.
// The window was checked when a step was scheduled, never when it was
// sent. Rows due but outside their window now are released to its next
// opening: not sent, not failed, no attempt counted, not overdue.
func TestTickSendsNothingOutsideTheWindow(t *testing.T) {
	t.Parallel()
	now := time.Now()
	zone, _ := noonZone(now)
	// Open from midnight to an hour ago in that zone (a minute past
	// midnight when it is just after noon there).
	local := now.In(time.FixedZone("", (12-now.UTC().Hour())*3600))
	end := Clock(max(local.Hour()*60+local.Minute()-60, 1))
	f := newFixture(t, fixtureOptions{leads: 20, mailboxes: 2,
		extraYAML: fmt.Sprintf("window: {timezone: %q, days: [mon, tue, wed, thu, fri, sat, sun], start: \"00:00\", end: %q}\n", zone, end)})
	f.due() // due before the window shut, as after an outage

	rep := f.tick(TickOptions{})
	if got := f.srv.Received(); got != 0 {
		t.Fatalf("the server received %d messages outside the window (report %+v)", got, rep.Outcomes)
	}
	loc, _ := time.LoadLocation(zone)
	y, m, d := now.In(loc).Date()
	opening := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'active' AND current_step = 1 AND attempts = 0
		AND last_error IS NULL AND locked_until IS NULL AND next_send_at = $1`, opening); n != 20 {
		t.Errorf("%d of 20 rows wait untouched for the window's next opening %s", n, opening)
	}
	if n := f.count(`SELECT count(*) FROM sends`); n != 0 {
		t.Errorf("%d sends rows written outside the window", n)
	}
}

// A window that shuts between the claim and the send: the first message
// goes out, then the clock passes the window's end; nothing more is sent
// and the rest wait for the next opening.
func TestWindowClosingBeforeTheSendSendsNothing(t *testing.T) {
	t.Parallel()
	now := time.Now()
	zone, end := noonZone(now)
	var shift atomic.Int64
	f := newFixture(t, fixtureOptions{leads: 5, mailboxes: 1, acceptDelay: acceptDelay,
		onAccept:  func(int) { shift.Store(int64(4 * time.Hour)) },
		extraYAML: fmt.Sprintf("window: {timezone: %q, days: [mon, tue, wed, thu, fri, sat, sun], start: \"00:00\", end: %q}\n", zone, end)})
	f.due()
	clock := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }

	rep := f.tick(TickOptions{Now: clock, MaxDuration: 72 * time.Hour})
	if got := f.srv.Received(); got != 1 {
		t.Fatalf("the server received %d messages; want the one sent before the window shut (report %+v)", got, rep.Outcomes)
	}
	loc, _ := time.LoadLocation(zone)
	y, m, d := now.In(loc).Date()
	opening := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'active' AND current_step = 1 AND attempts = 0
		AND locked_until IS NULL AND next_send_at = $1`, opening); n != 4 {
		t.Errorf("%d of 4 rows wait for the window's next opening %s", n, opening)
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE status <> 'failed'`); n != 1 {
		t.Errorf("%d sends rows not failed, want the one sent", n)
	}
}

// The send-time check follows the window's wall clock in the lead's zone
// across daylight-saving changes, and a lead without a zone is in UTC (as
// docs/campaign-format.md says).
func TestWindowOutcomeAtSendTime(t *testing.T) {
	t.Parallel()
	every := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	business, err := NewWindow(LeadTimezone, every, "09:00", "17:00")
	if err != nil {
		t.Fatal(err)
	}
	early, err := NewWindow("America/New_York", every, "02:00", "04:00")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		tm, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		name  string
		w     *Window
		tz    string
		now   time.Time
		opens time.Time // zero: open, sent
	}{
		{"no window", nil, "", utc("2026-11-01 03:00"), time.Time{}},
		{"open in the lead's zone", business, "America/New_York", utc("2026-10-30 13:30"), time.Time{}}, // 09:30 EDT
		// After the fall-back change, 13:30 UTC is 08:30 EST: shut until 09:00 EST.
		{"shut after the clocks went back", business, "America/New_York", utc("2026-11-02 13:30"), utc("2026-11-02 14:00")},
		// 2026-03-08 02:00 EST does not exist; the window opens at 03:00 EDT (07:00 UTC).
		{"spring-forward gap", early, "", utc("2026-03-08 06:59"), utc("2026-03-08 07:00")},
		{"inside after the gap", early, "", utc("2026-03-08 07:30"), time.Time{}},
		{"lead without a zone is UTC", business, "", utc("2026-12-02 08:00"), utc("2026-12-02 09:00")},
		{"unknown lead zone is UTC", business, "Nowhere/Land", utc("2026-12-02 17:00"), utc("2026-12-03 09:00")},
	}
	for _, tc := range cases {
		r := claimed(1, 7, 2)
		r.Timezone = tc.tz
		o, shut := windowOutcome(tc.w, r, tc.now, nil)
		if shut != !tc.opens.IsZero() {
			t.Errorf("%s: shut = %v at %s", tc.name, shut, tc.now)
			continue
		}
		if !shut {
			continue
		}
		u := onlyUpdate(t, o)
		if o.kind != OutcomeOutsideWindow || u.Status != "active" || u.CurrentStep != 2 || u.Attempts != r.Attempts || u.LastError != "" || !u.NextSendAt.Equal(tc.opens) {
			t.Errorf("%s: %s %+v; want active, untouched, due at the opening %s", tc.name, o.kind, u, tc.opens)
		}
	}
}
