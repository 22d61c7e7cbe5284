package status_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestWatchFrameFitsEightyColumns(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	seed(t, db, incidentSQL, fixedNow)
	// A send 30 seconds ago counts in sent/min; the fixture's are older.
	seed(t, db, `INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, created_at)
		SELECT id, 2, 2, 'recent-' || id, 'sent', :now - interval '30 seconds' FROM enrollments ORDER BY id LIMIT 3`, fixedNow)
	frame, err := status.BuildWatchFrame(context.Background(), db.Pool, fixedNow, status.Filter{}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := status.WriteWatch(&out, frame); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > status.WatchWidth {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	for _, want := range []string{
		"email   overdue " + cliio.Thousands(frame.Report.Email.Overdue),
		"sent/min 3 ",
		"breakers open: 1: acme/findymail until 2026-06-05 06:05:00Z",
		"paused mailboxes: 1: cy@acme.test until 2026-06-05 06:55:00Z",
		"tick email ", "tick enrich  running", "tick inbox   never ran",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("frame lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\x1b") {
		t.Errorf("frame has escape sequences; the caller decides on redraws:\n%q", text)
	}
}
