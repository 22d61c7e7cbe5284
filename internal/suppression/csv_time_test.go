package suppression

import (
	"strings"
	"testing"
)

// A created_at whose UTC year leaves 0001–9999 is refused with a line
// error: accepted, its export (RFC 3339 in UTC) wrote "-0001-12-31T23:00:00Z",
// which no import reads back (found by FuzzSuppressionCSV).
func TestCreatedAtOutsideRFC3339YearsIsALineError(t *testing.T) {
	t.Parallel()
	r, err := NewReader(strings.NewReader("email,created_at\na@b.test,0000-01-01T00:00:00+01:00\nc@d.test,9999-12-31T23:00:00-02:00\ne@f.test,2026-06-05T04:11:00Z\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, wantErr := range []bool{true, true, false} {
		e, lineErr, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := lineErr != nil; got != wantErr {
			t.Errorf("%+v: line error %v, want one: %v", e, lineErr, wantErr)
		}
		if lineErr != nil && !strings.Contains(lineErr.Reason, "0001 to 9999") {
			t.Errorf("line error %q does not name the range", lineErr.Reason)
		}
	}
}
