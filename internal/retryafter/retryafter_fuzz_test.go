package retryafter_test

import (
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/retryafter"
)

// FuzzParse: any input must parse without panicking, never to a negative
// duration, and to zero when it is not understood.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"0", "1", "120", "599", "600", "-1", "+5", " 30 ", "9223372036854775807", "99999999999999999999",
		"Wed, 21 Oct 2015 07:28:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
		"Fri, 31 Dec 9999 23:59:59 GMT", "1.5", "", "soon", "\x00",
	} {
		f.Add(s)
	}
	now := time.Date(2026, 6, 5, 4, 11, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := retryafter.Parse(v, now)
		if d < 0 {
			t.Fatalf("Parse(%q) = %s, negative", v, d)
		}
		if !ok && d != 0 {
			t.Fatalf("Parse(%q) = %s with ok false", v, d)
		}
	})
}
