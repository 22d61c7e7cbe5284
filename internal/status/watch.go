package status

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
)

// WatchWidth is the width `status --watch` draws in: a standard terminal.
const WatchWidth = cliio.Width

// WatchFrame is one redraw of `status --watch`.
type WatchFrame struct {
	Report *Report
	// SentLastMinute counts the messages handed to SMTP in the last minute.
	SentLastMinute int64
	Interval       time.Duration
}

// BuildWatchFrame reads one frame as of now.
func BuildWatchFrame(ctx context.Context, db store.Batcher, now time.Time, f Filter, interval time.Duration) (*WatchFrame, error) {
	r, err := Build(ctx, db, now, f)
	if err != nil {
		return nil, err
	}
	sent, err := store.OpsSentSince(ctx, db, now.Add(-time.Minute))
	if err != nil {
		return nil, err
	}
	return &WatchFrame{Report: r, SentLastMinute: sent, Interval: interval}, nil
}

// WriteWatch draws a frame as short lines of at most WatchWidth columns:
// overdue email, sends per minute, open breakers, paused mailboxes and the
// last tick of each kind.
func WriteWatch(w io.Writer, f *WatchFrame) error {
	r, now := f.Report, f.Report.GeneratedAt
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }

	add("rindactl status --watch  %s  every %s  Ctrl-C quits", stamp(now), f.Interval)
	oldest := lateness(r.Email.Overdue, r.Email.OldestOverdueSeconds)
	add("email   overdue %s  oldest %s  sent/min %s  blocked %s",
		cliio.Thousands(r.Email.Overdue), oldest, cliio.Thousands(f.SentLastMinute), cliio.Thousands(r.Email.Blocked.Total()))
	add("enrich  due %s  pending %s  enriched %s  failed %s",
		cliio.Thousands(r.Enrich.DueNow), cliio.Thousands(r.Enrich.ByStatus[lead.Pending]), cliio.Thousands(r.Enrich.ByStatus[lead.Enriched]),
		cliio.Thousands(r.Enrich.ByStatus[lead.EnrichmentFailed]))

	var open []string
	for _, b := range r.Breakers {
		if BreakerOpen(b.State, b.OpenUntil, now) {
			open = append(open, fmt.Sprintf("%s/%s until %s", b.Workspace, b.Provider, stamp(*b.OpenUntil)))
		}
	}
	add("breakers open: %s", listOrNone(open))
	var paused []string
	for _, m := range r.Email.Mailboxes {
		if !m.Paused(now) {
			continue
		}
		until := m.Status
		if m.PausedUntil != nil && m.PausedUntil.After(now) {
			until = "until " + stamp(*m.PausedUntil)
		}
		paused = append(paused, m.Address+" "+until)
	}
	add("paused mailboxes: %s", listOrNone(paused))

	for _, kind := range r.SortedKinds() {
		t := r.Ticks[kind]
		state := "never ran"
		switch {
		case t.Running:
			state = "running, started " + optAgo(t.LastStartedAt, now)
		case t.LastStartedAt != nil:
			state = "last " + optAgo(t.LastStartedAt, now)
			if t.LastFailureAt != nil && (t.LastSuccessAt == nil || t.LastFailureAt.After(*t.LastSuccessAt)) {
				state += ", FAILED: " + t.LastFailureError
			}
		}
		add("tick %-7s %s (%s runs, %s failed in 24h)", kind, state, cliio.Thousands(t.Runs24h), cliio.Thousands(t.Failures24h))
	}
	for _, l := range lines {
		if _, err := io.WriteString(w, ansi.Truncate(l, WatchWidth, "…")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d: %s", len(items), strings.Join(items, ", "))
}
