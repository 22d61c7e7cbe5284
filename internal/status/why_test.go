package status_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestExplainLead(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	seed(t, db, incidentSQL+`
INSERT INTO rate_limits (key, tat) VALUES ('hunter', :now + interval '3 seconds'), ('hunter/ws/2', :now + interval '9 seconds');
UPDATE lead_enrichment SET last_error = 'findymail: auth (HTTP 401): bad api_key=sk_live_123&x=1' WHERE lead_id = 2;`, fixedNow)
	ctx := context.Background()

	x, err := status.ExplainLead(ctx, db.Pool, fixedNow, "crm-2", "", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The negative cache names its real cause (the last error), so the last
	// error is not repeated as a hold of its own.
	if got := status.HoldCodes(x.Holds); got != "negative_cache,breaker_open,rate_limit" {
		t.Errorf("holds = %s", got)
	}
	if strings.Contains(x.LastError, "sk_live_123") || !strings.Contains(x.LastError, "[redacted]") {
		t.Errorf("last error not redacted: %q", x.LastError)
	}
	if !strings.HasPrefix(x.Summary, "held back: unreachable: findymail: auth (HTTP 401)") || strings.Contains(x.Summary, "sk_live_123") {
		t.Errorf("summary = %q", x.Summary)
	}

	// beta is over its ceiling; lead ids work as well as external ids.
	x, err = status.ExplainLead(ctx, db.Pool, fixedNow, "61", "beta", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := status.HoldCodes(x.Holds); got != "ceiling_reached,rate_limit,rate_limit" || !strings.Contains(x.Holds[0].Detail, "$12.50 of its $10.00") {
		t.Errorf("beta lead holds = %s %+v", got, x.Holds)
	}

	x, err = status.ExplainLead(ctx, db.Pool, fixedNow, "crm-36", "acme", 24*time.Hour)
	if err != nil || status.HoldCodes(x.Holds) != "lease,breaker_open,rate_limit" || !strings.Contains(x.Holds[0].Detail, "enrich-host1-42") {
		t.Errorf("in-progress lead: %v %+v", err, x)
	}
	x, err = status.ExplainLead(ctx, db.Pool, fixedNow, "crm-40", "", 24*time.Hour)
	if err != nil || len(x.Holds) != 0 || !strings.HasPrefix(x.Summary, "enriched") {
		t.Errorf("enriched lead: %v %+v", err, x)
	}

	var nf *status.NotFoundError
	if _, err := status.ExplainLead(ctx, db.Pool, fixedNow, "crm-999", "", 24*time.Hour); !errors.As(err, &nf) {
		t.Errorf("missing lead: err = %v", err)
	}
}

// A spend at the ceiling only with the calls in flight counted is a wait
// for them to settle (the guard refuses for a minute, as a miss is
// refunded), not a ceiling until next month; once the settled spend alone
// reaches it, it is.
func TestExplainLeadCeilingHeldByCallsInFlight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reserved float64
		hold     string
		reached  bool
	}{
		{5, "ceiling_in_flight", false}, // settled 7.50 of 10
		{2, "ceiling_reached", true},    // settled 10.50 of 10
	} {
		db := storetest.New(t)
		seed(t, db, incidentSQL+fmt.Sprintf(`
INSERT INTO provider_calls (workspace_id, provider, state, cost_usd, created_at)
VALUES (2, 'hunter', 'reserved', %v, :now - interval '10 seconds'),
       (2, 'hunter', 'reserved', 100, :now - interval '40 days');`, tc.reserved), fixedNow)
		ctx := context.Background()
		x, err := status.ExplainLead(ctx, db.Pool, fixedNow, "61", "beta", 24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(x.Holds) == 0 || x.Holds[0].Code != tc.hold {
			t.Fatalf("reserved %v: holds = %s, want %s first", tc.reserved, status.HoldCodes(x.Holds), tc.hold)
		}
		h := x.Holds[0]
		if tc.hold == "ceiling_in_flight" {
			if h.Until == nil || !h.Until.Equal(fixedNow.Add(time.Minute)) || !strings.Contains(h.Detail, "$5.00 of its $10.00") || !strings.HasPrefix(x.Summary, "held back: ") {
				t.Errorf("in-flight hold: until %v, %q, summary %q", h.Until, h.Detail, x.Summary)
			}
		} else if h.Until == nil || h.Until.Month() != fixedNow.Month()+1 {
			t.Errorf("ceiling hold until %v, want next month", h.Until)
		}
		r, err := status.Build(ctx, db.Pool, fixedNow, status.Filter{Workspace: "beta"})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Spend) != 1 || r.Spend[0].Reached != tc.reached || r.Spend[0].InFlightUSD != tc.reserved {
			t.Errorf("reserved %v: spend %+v, want reached %v with %v in flight", tc.reserved, r.Spend, tc.reached, tc.reserved)
		}
	}
}

// Issue 24: a lead waiting for a throttled provider says so, with the
// provider's Retry-After, and an address paid for but not verified yet is
// shown with its source.
func TestExplainLeadNamesTheWait(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	seed(t, db, incidentSQL+`
UPDATE lead_enrichment SET status = 'pending', next_attempt_at = :now + interval '2 minutes', negative_cache_until = NULL,
    provider = 'findymail', last_error = 'findymail throttled until 05:57:00 UTC, Retry-After 120 s (breaker_open after repeated rate_limited answers)',
    missed_by = '{hunter}'
WHERE lead_id = 2;
UPDATE lead_enrichment SET status = 'unreachable', next_attempt_at = :now + interval '1 day', negative_cache_until = :now + interval '1 day',
    provider = 'millionverifier', found_email = 'ada@co3.example', found_by = 'findymail',
    last_error = 'verify pending: ada@co3.example (found by findymail) waits for its verifier: millionverifier: quota_exhausted'
WHERE lead_id = 3;`, fixedNow)
	ctx := context.Background()
	x, err := status.ExplainLead(ctx, db.Pool, fixedNow, "crm-2", "", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(x.Summary, "held back: waiting until 2026-06-05 05:57:00Z: findymail throttled until 05:57:00 UTC, Retry-After 120 s") ||
		strings.Contains(x.Summary, "quota or auth") || len(x.MissedBy) != 1 || x.MissedBy[0] != "hunter" {
		t.Errorf("throttled lead: summary %q, missed_by %v", x.Summary, x.MissedBy)
	}
	x, err = status.ExplainLead(ctx, db.Pool, fixedNow, "crm-3", "", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := status.HoldCodes(x.Holds); !strings.HasPrefix(got, "negative_cache,verify_pending") || x.FoundEmail != "ada@co3.example" || x.FoundBy != "findymail" {
		t.Errorf("verify pending lead: holds %s, %+v", got, x)
	}
}

func TestExplainEnrollment(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	seed(t, db, incidentSQL, fixedNow)
	ctx := context.Background()
	id := func(campaign, lead int) int64 {
		var id int64
		if err := db.Pool.QueryRow(ctx, "SELECT id FROM enrollments WHERE campaign_id = $1 AND lead_id = $2", campaign, lead).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	for _, tc := range []struct {
		campaign, lead int
		codes, summary string
	}{
		{1, 38, "", "due now"}, // Seoul lead on ana: nothing holds it
		{1, 37, "outside_window", "held back: outside the sending"}, // New York lead at 01:55
		{1, 32, "mailbox_paused", "held back: mailbox cy@acme.test is paused until 2026-06-05 06:55:00Z (daily limit"},
		{1, 20, "no_email", "held back: lead 20 has no email"},
		{1, 60, "not_due,no_email", "held back: step 1 is scheduled"},
		{2, 5, "failed,outside_window,last_error", "held back: step 1 failed for good"},
		{1, 3, "", "completed"},
	} {
		x, err := status.ExplainEnrollment(ctx, db.Pool, fixedNow, id(tc.campaign, tc.lead))
		if err != nil {
			t.Fatal(err)
		}
		if got := status.HoldCodes(x.Holds); got != tc.codes || !strings.HasPrefix(x.Summary, tc.summary) {
			t.Errorf("campaign %d lead %d: holds %q summary %q, want %q %q", tc.campaign, tc.lead, got, x.Summary, tc.codes, tc.summary)
		}
	}
	var nf *status.NotFoundError
	if _, err := status.ExplainEnrollment(ctx, db.Pool, fixedNow, 987654); !errors.As(err, &nf) {
		t.Errorf("missing enrollment: err = %v", err)
	}
}

// Issue 39: a lead whose finder's answer a killed tick lost says when that
// finder is asked again by itself (RINDA_IN_DOUBT_RETRY_AFTER past the
// doubt, a possible second charge); with the retry off, that only requeue
// --refind asks it.
func TestExplainLeadSaysWhenInDoubtIsAskedAgain(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	seed(t, db, incidentSQL+`
UPDATE lead_enrichment SET status = 'pending', next_attempt_at = :now + interval '23 hours', negative_cache_until = NULL,
    provider = 'hunter', doubted_by = '{hunter}', doubted_at = :now - interval '1 hour',
    last_error = 'hunter''s answer to an earlier call was lost'
WHERE lead_id = 2;`, fixedNow)
	ctx := context.Background()
	x, err := status.ExplainLead(ctx, db.Pool, fixedNow, "crm-2", "", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := fixedNow.Add(23 * time.Hour).UTC()
	var hold *status.Hold
	for i := range x.Holds {
		if x.Holds[i].Code == "in_doubt" {
			hold = &x.Holds[i]
		}
	}
	if hold == nil || hold.Until == nil || !hold.Until.Equal(want) || x.DoubtRetryAt == nil || !x.DoubtRetryAt.Equal(want) ||
		!strings.Contains(hold.Detail, "asked again at") || !strings.Contains(hold.Detail, "second charge") {
		t.Errorf("holds %+v, doubt_retry_at %v: want an in_doubt hold until %s", x.Holds, x.DoubtRetryAt, want)
	}
	x, err = status.ExplainLead(ctx, db.Pool, fixedNow, "crm-2", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if x.DoubtRetryAt != nil || !strings.Contains(status.HoldCodes(x.Holds), "in_doubt") || !strings.Contains(fmt.Sprint(x.Holds), "--refind") {
		t.Errorf("retry off: holds %+v, doubt_retry_at %v: want an in_doubt hold naming requeue --refind, no retry time", x.Holds, x.DoubtRetryAt)
	}
}
