package sequence

import (
	"context"
	"testing"
)

// TestTickCrashLeavesAtMostTwoUnknownPerMailbox loses the database in the
// middle of a drain, as a crash would (nothing after that moment is
// written): each mailbox may then hold at most two 'sending' rows, the
// message on the wire and the one prepared behind it, whatever was sent
// before and not yet settled. The next tick records them as unknown and
// sends none of them again.
func TestTickCrashLeavesAtMostTwoUnknownPerMailbox(t *testing.T) {
	t.Parallel()
	const mailboxes, leads = 3, 300
	var f *fixture
	f = newFixture(t, fixtureOptions{leads: leads, mailboxes: mailboxes, onAccept: func(n int) {
		if n == leads/2 {
			cutTickRole(f)
		}
	}})
	const crashed = "crashed-tick"
	if _, err := RunTick(context.Background(), f.tickPool, TickOptions{Mailer: f.mailer, TickID: crashed}); err == nil {
		t.Fatal("the tick lost its database and reported no error")
	}
	restoreTickRole(f)

	rows, err := f.pool.Query(context.Background(), `SELECT mailbox_id, count(*) FROM sends WHERE status = 'sending' GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for rows.Next() {
		var mb int64
		var n int
		if err := rows.Scan(&mb, &n); err != nil {
			t.Fatal(err)
		}
		left += n
		if n > 2 {
			t.Errorf("mailbox %d: %d messages left 'sending' by the crash, want at most 2 (the one on the wire and the one prepared)", mb, n)
		}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}

	// The crashed tick's leases run out; the next tick records what it
	// left 'sending' as unknown and sends the rest.
	f.exec(`UPDATE enrollments SET next_send_at = now() - interval '1 second', locked_until = now() - interval '1 second' WHERE locked_by = $1`, crashed)
	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeUnknown] != left {
		t.Errorf("recovery tick: %d unknown, want the %d rows the crash left 'sending' (%+v)", rep.Outcomes[OutcomeUnknown], left, rep)
	}
	got := map[string]int{}
	for _, m := range f.srv.Messages() {
		got[m.To[0]]++
	}
	for addr, n := range got {
		if n > 1 {
			t.Errorf("%s was mailed %d times", addr, n)
		}
	}
	// Every message the server has is recorded sent or unknown; a row
	// recorded sent went out. (An unknown one may not have: the prepared
	// message behind the one on the wire.)
	recorded := map[string]string{}
	srows, err := f.pool.Query(context.Background(), `SELECT l.email, s.status FROM sends s JOIN enrollments e ON e.id = s.enrollment_id JOIN leads l ON l.id = e.lead_id`)
	if err != nil {
		t.Fatal(err)
	}
	for srows.Next() {
		var addr, status string
		if err := srows.Scan(&addr, &status); err != nil {
			t.Fatal(err)
		}
		recorded[addr] = status
		if status == "sent" && got[addr] == 0 {
			t.Errorf("%s recorded sent, never received", addr)
		}
	}
	for addr := range got {
		if s := recorded[addr]; s != "sent" && s != "delivery_unknown" {
			t.Errorf("%s received, recorded %q", addr, s)
		}
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE status = 'sending'`); n != 0 {
		t.Errorf("%d rows still 'sending' after the recovery tick", n)
	}
}

// cutTickRole takes the database from the tick role, as a crash or a lost
// server would: its connections are cut and no new one is allowed.
func cutTickRole(f *fixture) {
	var db string
	f.pool.QueryRow(context.Background(), `SELECT current_database()`).Scan(&db)
	f.exec(`REVOKE CONNECT ON DATABASE "` + db + `" FROM PUBLIC, rindactl_tick`)
	f.exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND usename = 'rindactl_tick'`)
}

func restoreTickRole(f *fixture) {
	var db string
	f.pool.QueryRow(context.Background(), `SELECT current_database()`).Scan(&db)
	f.exec(`GRANT CONNECT ON DATABASE "` + db + `" TO PUBLIC`)
}
