package suppression

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 37, finding 7: a created_at of 0001-01-01 (the zero time) was
// accepted and the database replaced it with now, silently. A created_at
// before 1970 or more than CreatedAtSkew ahead is a line error naming the
// line, the column and the range; the bounds themselves are accepted.
// (Issue 25's years outside 0001-9999 in UTC fall out of it too.)
func TestCreatedAtOutOfRangeIsALineError(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	lines := []struct {
		createdAt string
		bad       bool
	}{
		{"0001-01-01T00:00:00Z", true},
		{"0000-01-01T00:00:00+01:00", true},
		{"1969-12-31T23:59:59Z", true},
		{"1970-01-01T00:00:00Z", false},
		{"1970-01-01T01:00:00+01:00", false},
		{"2026-06-05T04:11:00Z", false},
		{"2026-12-06T08:00:00Z", false}, // now + the skew
		{"2026-12-06T08:00:01Z", true},
		{"9999-12-31T23:00:00-02:00", true},
	}
	var csv strings.Builder
	csv.WriteString("reason,email,created_at\n")
	for _, l := range lines {
		csv.WriteString(",a@b.test," + l.createdAt + "\n")
	}
	r, err := NewReader(strings.NewReader(csv.String()))
	if err != nil {
		t.Fatal(err)
	}
	r.now = func() time.Time { return now }
	for i, l := range lines {
		e, lineErr, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := lineErr != nil; got != l.bad {
			t.Errorf("created_at %s: line error %v, want one: %v", l.createdAt, lineErr, l.bad)
			continue
		}
		if lineErr == nil {
			if e.CreatedAt.IsZero() || !e.CreatedAt.Equal(mustTime(t, l.createdAt)) {
				t.Errorf("created_at %s read as %v", l.createdAt, e.CreatedAt)
			}
			continue
		}
		msg := lineErr.Error()
		for _, want := range []string{"line " + strconv.Itoa(i+2) + ": ", "created_at (column 3)", l.createdAt, "1970-01-01T00:00:00Z to 2026-12-06T08:00:00Z"} {
			if !strings.Contains(msg, want) {
				t.Errorf("line error %q does not say %q", msg, want)
			}
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
