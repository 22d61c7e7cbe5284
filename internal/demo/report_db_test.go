package demo_test

import (
	"context"
	"maps"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/demo"
	"github.com/rindactl/rindactl/internal/pgtmp"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/benchstore"
)

// Every number of the report is what the kept database (--keep) holds at
// the end, after both acts. Before, the report was read before the second
// act, whose email tick then sent the incident's steps that had come due:
// the report said 2,894 sent where the database held 16,187.
func TestDemoReportMatchesTheKeptDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	server, err := pgtmp.Start(ctx, pgtmp.Options{Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Stop() })
	rep, err := demo.Run(ctx, demo.Config{
		Binary: binary, ServerURL: server.URL, Keep: true,
		Leads: 120, Overdue: 80, Mailboxes: 3, Rounds: 2, Interval: 2 * time.Second,
		TempDir: t.TempDir(), Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	name, _, ok := strings.Cut(strings.TrimPrefix(rep.Database, "scratch database "), " ")
	if !ok {
		t.Fatalf("no scratch database named in %q", rep.Database)
	}
	u, err := url.Parse(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	pool, err := store.Open(ctx, store.Config{URL: u.String(), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	const sentBy = `SELECT count(*) FROM sends s JOIN mailboxes m ON m.id = s.mailbox_id WHERE s.status = 'sent' AND m.address = $1`

	// Every message the database holds is one the report counts.
	in := rep.Inbox
	if all := count(`SELECT count(*) FROM sends WHERE status = 'sent'`); all != rep.EmailsSent+in.RampSent+in.SeasonedSent {
		t.Errorf("the database holds %d sent messages; the report: %d of the incident + %d + %d of the second act",
			all, rep.EmailsSent, in.RampSent, in.SeasonedSent)
	}
	t.Logf("sent: %d in the rounds, %d in all of the incident", rep.EmailsSentInRounds, rep.EmailsSent)
	if rep.EmailsSentInRounds > rep.EmailsSent {
		t.Errorf("%d sent in the rounds, more than the %d of the incident", rep.EmailsSentInRounds, rep.EmailsSent)
	}
	sum := 0
	for addr, n := range rep.Spread.ByMailbox {
		sum += n
		if got := count(sentBy, addr); got != n {
			t.Errorf("%s: the report says %d sent, the database holds %d", addr, n, got)
		}
	}
	if sum != rep.EmailsSent || len(rep.Spread.ByMailbox) != 3 {
		t.Errorf("the spread counts %d over %d mailboxes; the report says %d sent over 3", sum, len(rep.Spread.ByMailbox), rep.EmailsSent)
	}
	if got := count(sentBy, "fresh@inbox-demo.example"); got != in.RampSent {
		t.Errorf("fresh mailbox: the report says %d sent, the database holds %d", in.RampSent, got)
	}
	if got := count(sentBy, "seasoned@inbox-demo.example"); got != in.SeasonedSent {
		t.Errorf("seasoned mailbox: the report says %d sent, the database holds %d", in.SeasonedSent, got)
	}
	if got := count(`SELECT cap_today FROM mailboxes WHERE address = 'fresh@inbox-demo.example'`); got != in.RampCapToday {
		t.Errorf("fresh mailbox: the report says cap today %d, the database %d", in.RampCapToday, got)
	}

	byStatus, enrichedBy := map[string]int{}, map[string]int{}
	rows, err := benchstore.DemoEnrichmentResults(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		byStatus[r.Status] += int(r.Leads)
		if r.Source != "" {
			enrichedBy[r.Source] += int(r.Leads)
		}
	}
	if !maps.Equal(byStatus, rep.LeadsByStatus) || !maps.Equal(enrichedBy, rep.EnrichedBy) {
		t.Errorf("leads by state: report %v / %v, database %v / %v", rep.LeadsByStatus, rep.EnrichedBy, byStatus, enrichedBy)
	}
	leadStatus := func(email string) string {
		var s string
		if err := pool.QueryRow(ctx, `SELECT e.status FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = $1`, email).Scan(&s); err != nil {
			t.Fatalf("%s: %v", email, err)
		}
		return s
	}
	if got := leadStatus(in.ReplyLead); got != in.ReplyStatus {
		t.Errorf("%s: the report says %s, the database %s", in.ReplyLead, in.ReplyStatus, got)
	}
	if got := leadStatus(in.BounceLead); got != in.BounceStatus {
		t.Errorf("%s: the report says %s, the database %s", in.BounceLead, in.BounceStatus, got)
	}
	if got := count(`SELECT count(*) FROM suppressions WHERE email = $1`, in.BounceLead) > 0; got != in.Suppressed {
		t.Errorf("%s: the report says suppressed %v, the database %v", in.BounceLead, in.Suppressed, got)
	}
}
