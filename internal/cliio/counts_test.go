package cliio

import "testing"

func TestCountsInNameOrder(t *testing.T) {
	t.Parallel()
	m := map[string]int{"transient": 1, "sent": 3, "bounced": 0}
	if got := Counts(m, "=", " "); got != "bounced=0 sent=3 transient=1" {
		t.Errorf("got %q", got)
	}
	if got := Counts(m, " ", ", "); got != "bounced 0, sent 3, transient 1" {
		t.Errorf("got %q", got)
	}
	if got := Counts(map[string]int{"sent": 12345}, "=", " "); got != "sent=12,345" {
		t.Errorf("thousands: got %q", got)
	}
	if got := Counts(nil, "=", " "); got != "none" {
		t.Errorf("empty: got %q, want none", got)
	}
}

func TestThousandsAndDecimal(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 86000: "86,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
	for _, tc := range []struct {
		v      float64
		places int
		want   string
	}{{12345.6, 2, "12,345.60"}, {0.12345, 4, "0.1235"}, {-0.5, 2, "-0.50"}, {-1234.5, 1, "-1,234.5"}, {1e6, 0, "1,000,000"}} {
		if got := Decimal(tc.v, tc.places); got != tc.want {
			t.Errorf("Decimal(%v, %d) = %q, want %q", tc.v, tc.places, got, tc.want)
		}
	}
}
