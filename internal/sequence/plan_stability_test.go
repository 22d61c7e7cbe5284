package sequence

import (
	"context"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

// A tick keeps its statements prepared for its whole run, and Postgres
// caches a generic plan for each after a few runs, made on the tables as
// they were then. On a young install the tables a tick fills (sends,
// campaign_recipients, events, suppressions) are small or empty when it
// starts, so a plan that looks rows up by scanning such a table is cheap
// to Postgres and is kept while the tick fills it: a scan per row (or per
// group) that grows with every message. This runs two ticks (first steps,
// then follow-ups over the sends of the first) on statistics taken while
// those tables were empty, and counts the rows sequential scans read from
// each: none may read more than about once what it holds.
func TestTickReadsNoGrowingTablePerRow(t *testing.T) {
	t.Parallel()
	const leads = 2000
	f := newFixture(t, fixtureOptions{leads: leads, mailboxes: 6})
	scans := storetest.CountSeqScans(t, f.pool, f.tickPool.Config().ConnString())
	for _, step := range []int{1, 2} {
		rep, err := RunTick(context.Background(), scans.Pool, TickOptions{Mailer: f.mailer})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Sent != leads {
			t.Fatalf("step %d tick sent %d, want %d", step, rep.Sent, leads)
		}
		f.due()
	}
	tables := []string{"sends", "campaign_recipients", "enrollments", "leads", "events", "suppressions", "email_mailbox_totals"}
	read := scans.SeqScanReads(t, tables...)
	// Whole looks now and then are fine: the test's own due() reads
	// enrollments once per tick, a claim (planned per run) may scan a table
	// this small, and a loaded machine makes more, smaller claims (up to
	// five looks seen). A look per row read 7.1 million rows of
	// campaign_recipients here (3,500 looks). One per settled group read
	// 13,000–54,000 of sends, depending on how the machine's load groups
	// the outcomes, so sends, which no claim reads whole, gets a tighter
	// bound; TestSendingRoundsNeverScanRecipientsPerRow (store) checks the
	// settle with fixed groups.
	perMessage := map[string]bool{"sends": true, "events": true, "suppressions": true, "email_mailbox_totals": true}
	for _, table := range tables {
		rows := f.count(`SELECT count(*) FROM ` + table)
		bound := 100 * max(rows, leads)
		if perMessage[table] {
			bound = 3 * max(rows, leads)
		}
		t.Logf("%s: sequential scans read %d rows; it holds %d (bound %d)", table, read[table], rows, bound)
		if read[table] > bound {
			t.Errorf("%s: sequential scans read %d rows during two ticks of %d messages each; it holds %d (a scan per row or per group)", table, read[table], leads, rows)
		}
	}
}
