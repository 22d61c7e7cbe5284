package invariants

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/sequence"
)

// evidence is what the checks read once a run is over: the fake servers'
// own logs and the database, never a tick's report. Times are harness
// times.
type evidence struct {
	deliveries []delivery
	caps       []capObservation
	// sends by Message-ID.
	sends       map[string]sendRow
	enrollments map[int64]enrollmentRow
	// windows by campaign; nil sends at any time.
	windows map[int64]*sequence.Window
	// suppressed addresses (normalised) and since when.
	suppressed map[string]time.Time
	// stopsSeen: when the harness first saw an enrollment stopped (after
	// an epoch), which bounds its stop when later writes moved updated_at.
	stopsSeen map[int64]time.Time
	// After the recovery ticks: sends rows still 'sending', active
	// enrollments and leads still under a lease.
	leftSending, leasedEnrollments, leasedLeads []string
	spend                                       []spendRow
	// For the enrichment checks (issue 24).
	providerModes []providerModeChange
	unreachable   []parkedLead
	paidFinds     map[string]int // "lead/provider" → billed calls from its first find paid, or maybe paid (in doubt), on
}

type sendRow struct {
	enrollment int64
	step       int
	status     string
}

type enrollmentRow struct {
	id, campaign int64
	email, tz    string
	status       string
	// updated is when the row last changed: a stop (replied,
	// unsubscribed, bounced) happened at or before it (and at or before
	// the harness first saw it: evidence.stopsSeen).
	updated time.Time
}

type spendRow struct {
	workspace      string
	spent, ceiling float64 // spent: the most of any month
	hasCeiling     bool
	// ledger is every call's cost (reserved or settled) over the run's
	// months (one, or two when the calendar month turned during the run).
	ledger float64
	months int
}

type providerModeChange struct {
	at       time.Time
	provider string
	mode     string
}

type parkedLead struct {
	lead     int64
	at       time.Time
	provider string
	// What decides whether a provider could have served it: its name at
	// its domain (the stand-ins' directory misses some), and the
	// workspace's spend by then against its ceiling (negative: none).
	first, last, domain string
	spent, ceiling      float64
	// doubted are the finders whose answer a tick lost: no tick asks them
	// again until an operator does (requeue --refind), so they cannot serve.
	doubted []string
}

// collect reads the evidence of world w after its recovery.
func (w *world) collect() *evidence {
	ev := &evidence{deliveries: w.smtp.deliveries(), caps: w.caps, providerModes: w.providerModes, stopsSeen: w.stopsSeen}
	if err := retry(func() error { return ev.read(context.Background(), w.db.Pool, w.clock) }); err != nil {
		w.t.Fatalf("collecting evidence: %v", err)
	}
	return ev
}

func (ev *evidence) read(ctx context.Context, db *pgxpool.Pool, c *clock) error {
	ev.sends, ev.enrollments, ev.windows, ev.suppressed = map[string]sendRow{}, map[int64]enrollmentRow{}, map[int64]*sequence.Window{}, map[string]time.Time{}
	ev.leftSending, ev.leasedEnrollments, ev.leasedLeads, ev.spend = nil, nil, nil, nil
	ev.paidFinds, ev.unreachable = map[string]int{}, nil
	rows, err := db.Query(ctx, `SELECT message_id, enrollment_id, step, status FROM sends`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var s sendRow
		if err := rows.Scan(&id, &s.enrollment, &s.step, &s.status); err != nil {
			return err
		}
		ev.sends[id] = s
		if s.status == "sending" {
			ev.leftSending = append(ev.leftSending, id)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.Query(ctx, `SELECT e.id, e.campaign_id, lower(btrim(coalesce(l.email, ''))), coalesce(l.timezone, ''), e.status, e.updated_at,
			coalesce(e.status = 'active' AND e.locked_until > now(), false)
		FROM enrollments e JOIN leads l ON l.id = e.lead_id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var e enrollmentRow
		var leased bool
		if err := rows.Scan(&e.id, &e.campaign, &e.email, &e.tz, &e.status, &e.updated, &leased); err != nil {
			return err
		}
		e.updated = c.harness(e.updated)
		ev.enrollments[e.id] = e
		if leased {
			ev.leasedEnrollments = append(ev.leasedEnrollments, e.email)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.Query(ctx, `SELECT id, coalesce(window_timezone, ''), coalesce(window_days, '{}'),
			coalesce(to_char(window_start, 'HH24:MI'), ''), coalesce(to_char(window_end, 'HH24:MI'), '') FROM campaigns`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		var zone, start, end string
		var days []string
		if err := rows.Scan(&id, &zone, &days, &start, &end); err != nil {
			return err
		}
		if zone != "" {
			if ev.windows[id], err = sequence.NewWindow(zone, days, start, end); err != nil {
				return err
			}
		} else {
			ev.windows[id] = nil
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.Query(ctx, `SELECT lower(btrim(email)), created_at FROM suppressions`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var email string
		var at time.Time
		if err := rows.Scan(&email, &at); err != nil {
			return err
		}
		ev.suppressed[email] = c.harness(at)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.Query(ctx, `SELECT lead_id::text || ' ' || status FROM lead_enrichment
		WHERE locked_until > now() OR status = 'in_progress'`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		ev.leasedLeads = append(ev.leasedLeads, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.Query(ctx, `SELECT w.name, coalesce(max(s.spent_usd), 0)::float8, w.monthly_usd_ceiling IS NOT NULL,
			coalesce(w.monthly_usd_ceiling, 0)::float8,
			(SELECT coalesce(sum(c.cost_usd), 0) FROM provider_calls c WHERE c.workspace_id = w.id AND c.state <> 'refunded')::float8,
			(SELECT count(*) FROM workspace_spend s2 WHERE s2.workspace_id = w.id)::int
		FROM workspaces w LEFT JOIN workspace_spend s ON s.workspace_id = w.id
		GROUP BY w.id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var s spendRow
		if err := rows.Scan(&s.workspace, &s.spent, &s.hasCeiling, &s.ceiling, &s.ledger, &s.months); err != nil {
			return err
		}
		ev.spend = append(ev.spend, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.Query(ctx, `SELECT le.lead_id, le.updated_at, coalesce(le.provider, ''), l.first_name, l.last_name, l.company_domain,
			(SELECT coalesce(sum(c.cost_usd), 0) FROM provider_calls c
			 WHERE c.workspace_id = le.workspace_id AND c.state <> 'refunded' AND c.created_at <= le.updated_at)::float8,
			coalesce(w.monthly_usd_ceiling, -1)::float8, le.doubted_by
		FROM lead_enrichment le JOIN leads l ON l.id = le.lead_id JOIN workspaces w ON w.id = le.workspace_id
		WHERE le.status = 'unreachable'`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var p parkedLead
		if err := rows.Scan(&p.lead, &p.at, &p.provider, &p.first, &p.last, &p.domain, &p.spent, &p.ceiling, &p.doubted); err != nil {
			return err
		}
		p.at = c.harness(p.at)
		ev.unreachable = append(ev.unreachable, p)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// A find is paid when the provider answered it, or may have: a call
	// admitted and never settled (its answer lost to a kill or a lost
	// database) or settled in doubt by a later claim. From the first such
	// call of a lead at a provider on, every billed call (a find, a billed
	// miss, another in doubt) buys it again; billed misses before it do
	// not (a tick killed between a miss's settle and the lead's record
	// asks again, by design). A call the ledger marks as a second charge
	// is the in-doubt retry (RINDA_IN_DOUBT_RETRY_AFTER, issue 39), which
	// the harness reaches when it moves the clock past the wait: bought
	// again knowingly, recorded as such, not counted here.
	rows, err = db.Query(ctx, `SELECT lead_id::text || '/' || provider, count(*) FILTER (WHERE id >= first_find AND NOT second_charge)
		FROM (SELECT c.lead_id, c.provider, c.id, c.second_charge,
				min(c.id) FILTER (WHERE c.outcome IS NULL OR c.outcome IN ('found', 'in_doubt')) OVER (PARTITION BY c.lead_id, c.provider) AS first_find
			FROM provider_calls c
			WHERE (c.outcome IS NULL OR c.outcome IN ('found', 'not_found', 'in_doubt')) AND c.state <> 'refunded' AND c.cost_usd > 0 AND c.lead_id IS NOT NULL) x
		WHERE first_find IS NOT NULL
		GROUP BY 1`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return err
		}
		ev.paidFinds[k] = n
	}
	return rows.Err()
}

// enrollmentOf is the enrollment that sent a delivered message, found by
// its Message-ID; false when no sends row has it.
func (ev *evidence) enrollmentOf(d delivery) (enrollmentRow, bool) {
	s, ok := ev.sends[d.MessageID]
	if !ok {
		return enrollmentRow{}, false
	}
	e, ok := ev.enrollments[s.enrollment]
	return e, ok
}

func normalise(addr string) string { return strings.ToLower(strings.TrimSpace(addr)) }
