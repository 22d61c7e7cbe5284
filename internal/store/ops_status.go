package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/sendcap"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// OpsEnrichCounts is one workspace's enrichment state at a moment.
type OpsEnrichCounts struct {
	WorkspaceID int64
	ByStatus    map[lead.Status]int64
	// DueNow: claimable rows whose due clock has passed.
	DueNow int64
	// NegativeCache: unreachable rows still inside their negative cache.
	NegativeCache int64
	// Waiting: work a breaker or ceiling would hold (pending rows and
	// unreachable rows out of their negative cache).
	Waiting int64
	// RateLimited: pending rows not yet due whose last attempt was throttled.
	RateLimited int64
}

// OpsEnrichStatusCounts counts lead_enrichment per workspace as of now, all
// workspaces when workspaceID is nil.
func OpsEnrichStatusCounts(ctx context.Context, db DBTX, now time.Time, workspaceID *int64) ([]OpsEnrichCounts, error) {
	rows, err := sqlcdb.New(db).OpsEnrichCounts(ctx, sqlcdb.OpsEnrichCountsParams{Now: now, WorkspaceID: workspaceID})
	return convertRows(rows, err, "enrichment counts", func(r sqlcdb.OpsEnrichCountsRow) OpsEnrichCounts {
		return OpsEnrichCounts{
			WorkspaceID: r.WorkspaceID,
			ByStatus: map[lead.Status]int64{
				lead.Pending: r.Pending, lead.InProgress: r.InProgress, lead.Enriched: r.Enriched,
				lead.NotFound: r.NotFound, lead.Unreachable: r.Unreachable, lead.EnrichmentFailed: r.EnrichmentFailed,
			},
			DueNow: r.DueNow, NegativeCache: r.NegativeCache, Waiting: r.Waiting, RateLimited: r.RateLimited,
		}
	})
}

// OpsSpend is a workspace's provider spend since the month's start.
type OpsSpend struct {
	WorkspaceID int64
	Workspace   string
	CeilingUSD  *float64
	SpentUSD    float64
	// InFlightUSD is what calls still in flight reserve of SpentUSD.
	InFlightUSD float64
}

// OpsSpendSince sums reserved and settled provider calls since monthStart
// per workspace, and the reserved ones apart.
func OpsSpendSince(ctx context.Context, db DBTX, monthStart time.Time, workspaceID *int64) ([]OpsSpend, error) {
	rows, err := sqlcdb.New(db).OpsSpend(ctx, sqlcdb.OpsSpendParams{MonthStart: monthStart, WorkspaceID: workspaceID})
	return convertRows(rows, err, "spend", func(r sqlcdb.OpsSpendRow) OpsSpend {
		return OpsSpend{WorkspaceID: r.ID, Workspace: r.Workspace, CeilingUSD: r.CeilingUsd, SpentUSD: r.Spent, InFlightUSD: r.InFlight}
	})
}

// OpsBreaker is one breaker row.
type OpsBreaker struct {
	WorkspaceID int64
	Workspace   string
	Provider    string
	State       string
	OpenUntil   *time.Time
	Reason      string
	OpenedAt    *time.Time
}

// OpsBreakers lists breakers, of one workspace when workspaceID is not nil.
func OpsBreakers(ctx context.Context, db DBTX, workspaceID *int64) ([]OpsBreaker, error) {
	rows, err := sqlcdb.New(db).OpsBreakers(ctx, workspaceID)
	return convertRows(rows, err, "breakers", func(r sqlcdb.OpsBreakersRow) OpsBreaker {
		return OpsBreaker{
			WorkspaceID: r.WorkspaceID, Workspace: r.Workspace, Provider: r.Provider, State: r.State,
			OpenUntil: r.OpenUntil, Reason: r.Reason, OpenedAt: r.OpenedAt,
		}
	})
}

// OpsTickKind sums up one tick kind's history.
type OpsTickKind struct {
	Kind tickkind.Kind

	LastTickID     string
	LastHost       string
	LastStartedAt  *time.Time
	LastFinishedAt *time.Time
	LastExitStatus *int

	LastSuccessStartedAt  *time.Time
	LastSuccessFinishedAt *time.Time
	LastSuccessClaimed    *int
	LastSuccessCounts     map[string]any

	LastFailureStartedAt  *time.Time
	LastFailureExitStatus *int
	LastFailureError      string

	Runs24h     int64
	Failures24h int64
}

// OpsTicks sums up tick_runs per kind (enrich, email, events) as of now.
func OpsTicks(ctx context.Context, db DBTX, now time.Time) ([]OpsTickKind, error) {
	rows, err := sqlcdb.New(db).OpsTicks(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("tick history: %w", err)
	}
	out := make([]OpsTickKind, len(rows))
	for i, r := range rows {
		k := OpsTickKind{
			Kind:          tickkind.Kind(r.Kind),
			LastStartedAt: r.StartedAt, LastFinishedAt: r.FinishedAt, LastExitStatus: intOrNil(r.ExitStatus),
			LastSuccessStartedAt: r.SuccessStartedAt, LastSuccessFinishedAt: r.SuccessFinishedAt,
			LastSuccessClaimed:   intOrNil(r.SuccessClaimed),
			LastFailureStartedAt: r.FailureStartedAt, LastFailureExitStatus: intOrNil(r.FailureExitStatus),
			LastFailureError: r.FailureError,
			Runs24h:          r.Runs24h, Failures24h: r.Failures24h,
		}
		if r.TickID != nil {
			k.LastTickID = *r.TickID
		}
		if r.Host != nil {
			k.LastHost = *r.Host
		}
		if r.SuccessCounts != nil {
			if err := json.Unmarshal(r.SuccessCounts, &k.LastSuccessCounts); err != nil {
				return nil, fmt.Errorf("tick history: %s counts: %w", k.Kind, err)
			}
		}
		out[i] = k
	}
	return out, nil
}

// intOrNil widens a nullable integer column for the store's types.
func intOrNil(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}

// OpsTickSample is one finished tick: when it started and what it claimed.
type OpsTickSample struct {
	StartedAt time.Time
	Claimed   int
}

// OpsRecentTicks returns up to limit successful ticks of kind started at or
// before now, newest first.
func OpsRecentTicks(ctx context.Context, db DBTX, kind tickkind.Kind, now time.Time, limit int) ([]OpsTickSample, error) {
	rows, err := sqlcdb.New(db).OpsTickRecent(ctx, sqlcdb.OpsTickRecentParams{Kind: string(kind), Now: now, Max: int32(limit)})
	return convertRows(rows, err, fmt.Sprintf("recent %s ticks", kind), func(r sqlcdb.OpsTickRecentRow) OpsTickSample {
		return OpsTickSample{StartedAt: r.StartedAt, Claimed: int(r.Claimed)}
	})
}

// opsDueByKeyMax is the most due rows OpsEmailDue joins to their leads by
// key: 50,000 lookups take tens of milliseconds, against a scan of every
// lead ever imported.
const opsDueByKeyMax = 50000

// OpsDueGroup is a group of due active enrollments that share what decides
// whether they can go out now.
type OpsDueGroup struct {
	CampaignID int64
	MailboxID  *int64
	NoEmail    bool
	// LeadTimezone is set only for campaigns whose window follows the lead.
	LeadTimezone string
	// WaitsUntil is when the group's rows may go: now, or for rows backing
	// off after a refused send when their backoff ends (rounded up to the
	// second).
	WaitsUntil time.Time
	Count      int64
	Oldest     time.Time
}

// OpsEmailDue groups the active enrollments due at now.
//
// Up to opsDueByKeyMax due rows it reaches their leads by key (planDueByKey).
// Left to itself the planner hashes every lead: it takes every active
// enrollment for due, since by the table's statistics step_due_at is in
// the past (the ended sequences' steps are), though a running sequence's
// next step is ahead; and leads keep the history of every sequence ever
// run. A year of it (2M leads) made `status --overdue` read them all for
// 3,000 due rows (TestOverdueReportReadsNoLeadHistory). A large backlog
// keeps the planner's choice: hashing the leads is then the cheaper way.
func OpsEmailDue(ctx context.Context, db Batcher, now time.Time, workspaceID, campaignID *int64) ([]OpsDueGroup, error) {
	q := sqlcdb.New(db)
	n, err := q.OpsEmailDueCount(ctx, sqlcdb.OpsEmailDueCountParams{Now: now, WorkspaceID: workspaceID, CampaignID: campaignID,
		Max: opsDueByKeyMax + 1})
	if err != nil {
		return nil, fmt.Errorf("counting due enrollments: %w", err)
	}
	if n <= opsDueByKeyMax {
		q = sqlcdb.New(planDueByKey.on(db))
	}
	rows, err := q.OpsEmailDue(ctx, sqlcdb.OpsEmailDueParams{Now: now, WorkspaceID: workspaceID, CampaignID: campaignID})
	return convertRows(rows, err, "due enrollments", func(r sqlcdb.OpsEmailDueRow) OpsDueGroup {
		return OpsDueGroup{
			CampaignID: r.CampaignID, MailboxID: r.MailboxID, NoEmail: r.NoEmail,
			LeadTimezone: r.LeadTz, WaitsUntil: r.WaitsUntil, Count: r.N, Oldest: r.Oldest,
		}
	})
}

// OpsCampaign is a campaign with its window and active enrollment count.
type OpsCampaign struct {
	ID        int64
	Workspace string
	Name      string
	Status    string
	// Window fields are empty when the campaign may send at any time.
	WindowTimezone string
	WindowDays     []string
	WindowStart    string // HH:MM
	WindowEnd      string // HH:MM, exclusive
	Active         int64
	// DeliveryUnknown counts enrollments in status delivery_unknown.
	DeliveryUnknown int64
}

// OpsCampaigns lists campaigns, filtered by workspace and campaign id.
func OpsCampaigns(ctx context.Context, db DBTX, workspaceID, campaignID *int64) ([]OpsCampaign, error) {
	rows, err := sqlcdb.New(db).OpsCampaigns(ctx, sqlcdb.OpsCampaignsParams{WorkspaceID: workspaceID, CampaignID: campaignID})
	return convertRows(rows, err, "campaigns", func(r sqlcdb.OpsCampaignsRow) OpsCampaign {
		return OpsCampaign{
			ID: r.ID, Workspace: r.Workspace, Name: r.Name, Status: r.Status,
			WindowTimezone: r.WindowTimezone, WindowDays: r.WindowDays, WindowStart: r.WindowStart, WindowEnd: r.WindowEnd,
			Active: r.Active, DeliveryUnknown: r.DeliveryUnknown,
		}
	})
}

// OpsMailbox is a mailbox with its sends in the last 24 hours.
type OpsMailbox struct {
	ID        int64
	Workspace string
	Address   string
	Status    string
	// Cap is its daily cap and warm-up ramp; RampLevel the levels the ramp
	// grew, and it grows one more at RampDueAt (nil: no ramp).
	Cap         sendcap.Cap
	RampLevel   int
	RampDueAt   *time.Time
	PausedUntil *time.Time
	PauseReason string
	// CapToday is the cap in force (0 = none); RampNextAt the ramp's next
	// growth, nil without a ramp or once it reached its max.
	CapToday   int
	RampNextAt *time.Time
	// Sent24h counts the slots of the cap taken at now, as the email
	// claim counts them: sends of the rolling 24 hours that did not fail,
	// and rows claimed but not yet sending.
	Sent24h int64
	// RecentSends are its last sends that reached a server (at most the
	// bounce window), RecentBounces the hard bounces among them.
	RecentSends, RecentBounces int64
}

// OpsScope filters a listing by workspace and by the campaigns a row
// serves; nil: all.
type OpsScope struct {
	WorkspaceID, CampaignID *int64
}

// OpsMailboxes lists mailboxes as of now, filtered by scope, with their
// bounces over their last bounceWindow sends.
func OpsMailboxes(ctx context.Context, db DBTX, now time.Time, bounceWindow int, scope OpsScope) ([]OpsMailbox, error) {
	rows, err := sqlcdb.New(db).OpsMailboxes(ctx, sqlcdb.OpsMailboxesParams{Now: now, BounceWindow: int32(bounceWindow), WorkspaceID: scope.WorkspaceID, CampaignID: scope.CampaignID})
	return convertRows(rows, err, "mailboxes", func(r sqlcdb.OpsMailboxesRow) OpsMailbox {
		return OpsMailbox{
			ID: r.ID, Workspace: r.Workspace, Address: r.Address, Status: r.Status,
			Cap: rampCap(int(r.DailyCap), int(r.RampStart), int(r.RampStep), int(r.RampMax), r.RampEvery), RampLevel: int(r.RampLevel), RampDueAt: r.RampDueAt,
			PausedUntil: r.PausedUntil, PauseReason: r.PauseReason, CapToday: int(r.CapToday), RampNextAt: r.RampNextAt,
			Sent24h: r.Sent24h, RecentSends: r.RecentSends, RecentBounces: r.RecentBounces,
		}
	})
}

// OpsSlot is n slots of a mailbox's cap that free up at FreesAt.
type OpsSlot struct {
	MailboxID int64
	FreesAt   time.Time
	N         int64
}

// OpsMailboxSlots lists when the taken slots of the capped mailboxes free
// up, as of now, filtered like OpsMailboxes.
func OpsMailboxSlots(ctx context.Context, db DBTX, now time.Time, workspaceID, campaignID *int64) ([]OpsSlot, error) {
	rows, err := sqlcdb.New(db).OpsMailboxSlots(ctx, sqlcdb.OpsMailboxSlotsParams{Now: now, WorkspaceID: workspaceID, CampaignID: campaignID})
	return convertRows(rows, err, "mailbox cap slots", func(r sqlcdb.OpsMailboxSlotsRow) OpsSlot {
		return OpsSlot{MailboxID: r.MailboxID, FreesAt: r.FreesAt, N: r.N}
	})
}

// OpsSentSince counts the messages sent (or being sent) since since.
func OpsSentSince(ctx context.Context, db DBTX, since time.Time) (int64, error) {
	n, err := sqlcdb.New(db).OpsSentRecent(ctx, since)
	if err != nil {
		return 0, fmt.Errorf("sends since %s: %w", since.Format(time.RFC3339), err)
	}
	return n, nil
}

// OpsFollowUp is a group of follow-ups that take a capped mailbox's room
// before its overdue backlog (follow_ups_first): due at At (Overdue: part
// of the backlog, at now), N rows, each followed by steps after Delays.
type OpsFollowUp struct {
	MailboxID int64
	At        time.Time
	Overdue   bool
	N         int64
	Delays    []time.Duration
}

// OpsEmailFollowUps lists the follow-ups of follow_ups_first campaigns on
// capped mailboxes due before horizon, and the overdue rows whose next
// steps will be, filtered by scope.
func OpsEmailFollowUps(ctx context.Context, db DBTX, now, horizon time.Time, scope OpsScope) ([]OpsFollowUp, error) {
	rows, err := sqlcdb.New(db).OpsEmailFollowUps(ctx, sqlcdb.OpsEmailFollowUpsParams{Now: now, Horizon: horizon, WorkspaceID: scope.WorkspaceID, CampaignID: scope.CampaignID})
	return convertRows(rows, err, "scheduled follow-ups", func(r sqlcdb.OpsEmailFollowUpsRow) OpsFollowUp {
		f := OpsFollowUp{At: r.At, Overdue: r.Overdue, N: r.N}
		if r.MailboxID != nil {
			f.MailboxID = *r.MailboxID
		}
		for _, d := range r.Delays {
			f.Delays = append(f.Delays, time.Duration(d)*time.Second)
		}
		return f
	})
}
