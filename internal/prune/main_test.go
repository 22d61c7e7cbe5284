package prune_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// history seeds rows of every table prune walks, at chosen times, always
// in time order (ids grow with time, as in production).
type history struct {
	t        testing.TB
	db       store.DBTX
	ws       int64
	campaign int64
	mailbox  int64
	n        int
}

func newHistory(t testing.TB, db store.DBTX) *history {
	t.Helper()
	h := &history{t: t, db: db}
	h.ws = h.id("INSERT INTO workspaces (name) VALUES ('acme') RETURNING id")
	h.campaign = h.id("INSERT INTO campaigns (workspace_id, name) VALUES ($1, 'spring') RETURNING id", h.ws)
	h.mailbox = h.id(`INSERT INTO mailboxes (workspace_id, address, smtp_url, daily_cap) VALUES ($1, 'sdr@acme.test', 'smtp://sdr@127.0.0.1:1', 50) RETURNING id`, h.ws)
	if _, err := db.Exec(context.Background(), "INSERT INTO campaign_mailboxes VALUES ($1, $2)", h.campaign, h.mailbox); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *history) id(sql string, args ...any) int64 {
	h.t.Helper()
	var id int64
	if err := h.db.QueryRow(context.Background(), sql, args...).Scan(&id); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
	return id
}

// enrollment adds a lead enrolled with status, created and last updated
// at updated.
func (h *history) enrollment(status string, updated time.Time) int64 {
	h.n++
	lead := h.id(`INSERT INTO leads (workspace_id, first_name, email, created_at) VALUES ($1, 'Lead', $2, $3) RETURNING id`,
		h.ws, fmt.Sprintf("lead%d@example.test", h.n), updated)
	return h.id(`INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, current_step, next_send_at, mailbox_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 2, $5, $6, $5, $5) RETURNING id`, h.campaign, lead, h.ws, status, updated, h.mailbox)
}

func (h *history) send(enrollment int64, step int, status string, created time.Time) int64 {
	h.n++
	return h.id(`INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, created_at, sent_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`, enrollment, step, h.mailbox, fmt.Sprintf("<m%d@acme.test>", h.n), status, created)
}

func (h *history) call(state string, cost float64, created time.Time) int64 {
	return h.id(`INSERT INTO provider_calls (workspace_id, provider, state, cost_usd, outcome, created_at, settled_at)
		VALUES ($1, 'findymail', $2, $3, 'found', $4, $4) RETURNING id`, h.ws, state, cost, created)
}

// event adds an event of kind for provider's breaker episode; delivered
// nil leaves it undelivered.
func (h *history) event(kind string, alert bool, delivered *time.Time, episode int, created time.Time) int64 {
	h.n++
	return h.id(`INSERT INTO events (kind, workspace_id, provider, dedupe_key, payload, alert, delivered_at, created_at, next_attempt_at)
		VALUES ($1, $2, 'findymail', $3, jsonb_build_object('episode', $4::int), $5, $6, $7, $7) RETURNING id`,
		kind, h.ws, fmt.Sprintf("%s:%d:%d", kind, episode, h.n), episode, alert, delivered, created)
}

func (h *history) breaker(state string, episode int, until time.Time) {
	h.t.Helper()
	if _, err := h.db.Exec(context.Background(), `INSERT INTO breakers (workspace_id, provider, state, open_until, episode, opened_at)
		VALUES ($1, 'findymail', $2, $3, $4, $3) ON CONFLICT (workspace_id, provider) DO UPDATE
		SET state = excluded.state, open_until = excluded.open_until, episode = excluded.episode`, h.ws, state, until, episode); err != nil {
		h.t.Fatal(err)
	}
}

// run adds a finished tick run of kind with exit status exit.
func (h *history) run(kind string, exit int, started time.Time) int64 {
	h.n++
	return h.id(`INSERT INTO tick_runs (kind, tick_id, host, pid, started_at, finished_at, exit_status)
		VALUES ($1, $2, 'host', 1, $3::timestamptz, $3::timestamptz + interval '1 second', $4) RETURNING id`, kind, fmt.Sprintf("t%d", h.n), started, exit)
}

func (h *history) audit(created time.Time) int64 {
	return h.id(`INSERT INTO audit_log (actor, action, created_at) VALUES ('ops', 'requeue', $1) RETURNING id`, created)
}

// ids lists the ids left in table.
func ids(t testing.TB, db store.DBTX, table string) []int64 {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT id FROM "+table+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// expect checks that table holds exactly the kept ids of those seeded.
func expect(t testing.TB, db store.DBTX, table string, kept, gone []int64) {
	t.Helper()
	left := ids(t, db, table)
	for _, id := range kept {
		if !slices.Contains(left, id) {
			t.Errorf("%s: row %d was deleted; it must stay", table, id)
		}
	}
	for _, id := range gone {
		if slices.Contains(left, id) {
			t.Errorf("%s: row %d is still there; it should have been deleted", table, id)
		}
	}
}

func dbNow(t testing.TB, db store.DBTX) time.Time {
	t.Helper()
	now, err := store.DBNow(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return now
}
