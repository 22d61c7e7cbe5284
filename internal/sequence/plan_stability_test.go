package sequence

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

// A tick keeps its statements prepared for its whole run, and Postgres
// may cache a generic plan for each, made on the tables as they were then.
// On a young install the tables a tick fills (sends, campaign_recipients,
// events, suppressions) are small or empty when it starts, so a plan that
// looks rows up by scanning such a table is cheap to Postgres and is kept
// while the tick fills it: a scan per row (or per group) that grows with
// every message.
//
// The worst case, made on purpose so no load can change it: a warm-up tick
// of a few messages on statistics taken while those tables were empty
// plans every statement on its one connection, once for good
// (storetest.CountStalePlanScans); then those tables get a month of
// history (old sends, recipients, suppressions, events; the leads and
// completed enrollments behind them were there before the warm-up, as a
// tick never grows them), and a tick of first steps and follow-ups runs on
// those plans. A statement that scans a table (or the whole of one of its
// indexes) per row, per settled group or per claim reads the history each
// time: tens of times it. The measured tick claims twice (its batch takes
// every due row) whatever the load, and may look at a table whole in each.
func TestTickReadsNoGrowingTablePerRow(t *testing.T) {
	t.Parallel()
	const warm, leads, filler = 30, 600, 5000
	ctx := context.Background()
	f := newFixture(t, fixtureOptions{leads: warm, mailboxes: 6})
	f.addPastEnrollments(filler)
	tables := []string{"sends", "campaign_recipients", "enrollments", "leads", "events", "suppressions"}
	scans := storetest.CountStalePlanScans(t, f.pool, f.tickPool.Config().ConnString(), tables...)
	tick := func(want int) {
		t.Helper()
		// A batch that takes every due row: two claims (the second finds
		// none) however the machine's load paces the sending.
		rep, err := RunTick(ctx, scans.Pool, TickOptions{Mailer: f.mailer, Batch: 2 * leads})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Sent != want {
			t.Fatalf("tick sent %d, want %d", rep.Sent, want)
		}
	}
	tick(warm)
	f.addHistory()
	f.exec(`INSERT INTO leads (workspace_id, external_id, first_name, company, email, timezone)
		SELECT w.id, 'new-' || g, 'First' || g, 'Co' || g, 'new' || g || '@example.test', 'UTC'
		FROM workspaces w, generate_series(1, $1) g WHERE w.name = 'acme'`, leads-warm)
	if _, err := Enroll(ctx, f.pool, EnrollRequest{Workspace: "acme", Campaign: f.camp.Name}, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	f.due() // the warm-up's leads: their follow-ups
	scans.Reset(t)
	tick(leads)
	read := scans.Reads(t, tables...)
	for _, table := range tables {
		rows := f.count(`SELECT count(*) FROM ` + table)
		// Two whole looks by each kind of scan at most: the tick's two
		// claims (planned per run) may each hash-join a table, and its
		// lookups by key fetch a few rows per message, far fewer than the
		// history. A scan per settled group (at least six) or per row
		// reads the history each time.
		bound := 3 * rows
		r := read[table]
		t.Logf("%s: sequential scans read %d rows, index scans fetched %d; it holds %d (bound %d each)", table, r.Seq, r.Index, rows, bound)
		if r.Seq > bound || r.Index > bound {
			t.Errorf("%s: a tick of %d messages read %d rows by sequential scans and fetched %d by index scans; it holds %d: a scan per row, group or claim on a plan made while it was small",
				table, leads, r.Seq, r.Index, rows)
		}
	}
}

// addPastEnrollments gives the fixture's campaign n more leads, each with
// a completed enrollment (addHistory adds what their sends left).
func (f *fixture) addPastEnrollments(n int) {
	f.t.Helper()
	f.exec(`INSERT INTO leads (workspace_id, external_id, first_name, email, timezone)
		SELECT w.id, 'old-' || g, 'Old', 'old' || g || '@example.test', 'UTC'
		FROM workspaces w, generate_series(1, $1) g WHERE w.name = 'acme'`, n)
	// Planned on the new leads: a connection's trigger plan made while
	// leads held a few rows would scan it per enrollment.
	f.exec(`ANALYZE leads`)
	f.exec(`INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, current_step, mailbox_id, next_send_at)
		SELECT $1, l.id, l.workspace_id, 'completed', 2, (SELECT min(mailbox_id) FROM campaign_mailboxes WHERE campaign_id = $1), now() - interval '30 days'
		FROM leads l WHERE l.external_id LIKE 'old-%'`, f.id)
}

// addHistory gives each past enrollment (addPastEnrollments) its step-1
// send of a month ago and its recipient row, and the workspace as many
// suppressed addresses and delivered events: what the tables a tick grows
// hold after a while, none of it due.
func (f *fixture) addHistory() {
	f.t.Helper()
	n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'completed' AND campaign_id = $1`, f.id)
	f.exec(`INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, created_at, sent_at)
		SELECT e.id, 1, e.mailbox_id, '<old-' || e.id || '@acme.test>', 'sent', now() - interval '30 days', now() - interval '30 days'
		FROM enrollments e WHERE e.status = 'completed' AND e.campaign_id = $1`, f.id)
	f.exec(`INSERT INTO campaign_recipients (campaign_id, email, enrollment_id)
		SELECT e.campaign_id, l.email, e.id FROM enrollments e JOIN leads l ON l.id = e.lead_id
		WHERE e.status = 'completed' AND e.campaign_id = $1`, f.id)
	f.exec(`INSERT INTO suppressions (workspace_id, email, reason)
		SELECT w.id, 'gone' || g || '@example.test', 'bounced' FROM workspaces w, generate_series(1, $1) g WHERE w.name = 'acme'`, n)
	f.exec(`INSERT INTO events (kind, workspace_id, dedupe_key, created_at, delivered_at)
		SELECT 'mailbox_paused', w.id, 'old-' || g, now() - interval '30 days', now() - interval '30 days'
		FROM workspaces w, generate_series(1, $1) g WHERE w.name = 'acme'`, n)
}
