package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/lead"
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
	rows, err := db.Query(ctx, query("ops_enrich_counts"), now, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("enrichment counts: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsEnrichCounts, error) {
		var c OpsEnrichCounts
		var pending, inProgress, enriched, notFound, unreachable, failed int64
		err := r.Scan(&c.WorkspaceID, &pending, &inProgress, &enriched, &notFound, &unreachable, &failed,
			&c.DueNow, &c.NegativeCache, &c.Waiting, &c.RateLimited)
		c.ByStatus = map[lead.Status]int64{
			lead.Pending: pending, lead.InProgress: inProgress, lead.Enriched: enriched,
			lead.NotFound: notFound, lead.Unreachable: unreachable, lead.EnrichmentFailed: failed,
		}
		return c, err
	})
}

// OpsSpend is a workspace's provider spend since the month's start.
type OpsSpend struct {
	WorkspaceID int64
	Workspace   string
	CeilingUSD  *float64
	SpentUSD    float64
}

// OpsSpendSince sums reserved and settled provider calls since monthStart
// per workspace.
func OpsSpendSince(ctx context.Context, db DBTX, monthStart time.Time, workspaceID *int64) ([]OpsSpend, error) {
	rows, err := db.Query(ctx, query("ops_spend"), monthStart, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("spend: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsSpend, error) {
		var s OpsSpend
		return s, r.Scan(&s.WorkspaceID, &s.Workspace, &s.CeilingUSD, &s.SpentUSD)
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
	rows, err := db.Query(ctx, query("ops_breakers"), workspaceID)
	if err != nil {
		return nil, fmt.Errorf("breakers: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsBreaker, error) {
		var b OpsBreaker
		return b, r.Scan(&b.WorkspaceID, &b.Workspace, &b.Provider, &b.State, &b.OpenUntil, &b.Reason, &b.OpenedAt)
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
	rows, err := db.Query(ctx, query("ops_ticks"), now)
	if err != nil {
		return nil, fmt.Errorf("tick history: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsTickKind, error) {
		var k OpsTickKind
		var tickID, host *string
		err := r.Scan(&k.Kind, &tickID, &host, &k.LastStartedAt, &k.LastFinishedAt, &k.LastExitStatus,
			&k.LastSuccessStartedAt, &k.LastSuccessFinishedAt, &k.LastSuccessClaimed, &k.LastSuccessCounts,
			&k.LastFailureStartedAt, &k.LastFailureExitStatus, &k.LastFailureError,
			&k.Runs24h, &k.Failures24h)
		if tickID != nil {
			k.LastTickID = *tickID
		}
		if host != nil {
			k.LastHost = *host
		}
		return k, err
	})
}

// OpsTickSample is one finished tick: when it started and what it claimed.
type OpsTickSample struct {
	StartedAt time.Time
	Claimed   int
}

// OpsRecentTicks returns up to limit successful ticks of kind started at or
// before now, newest first.
func OpsRecentTicks(ctx context.Context, db DBTX, kind tickkind.Kind, now time.Time, limit int) ([]OpsTickSample, error) {
	rows, err := db.Query(ctx, query("ops_tick_recent"), kind, now, limit)
	if err != nil {
		return nil, fmt.Errorf("recent %s ticks: %w", kind, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsTickSample, error) {
		var s OpsTickSample
		return s, r.Scan(&s.StartedAt, &s.Claimed)
	})
}

// OpsDueGroup is a group of due active enrollments that share what decides
// whether they can go out now.
type OpsDueGroup struct {
	CampaignID int64
	MailboxID  *int64
	NoEmail    bool
	// LeadTimezone is set only for campaigns whose window follows the lead.
	LeadTimezone string
	Count        int64
	Oldest       time.Time
}

// OpsEmailDue groups the active enrollments due at now.
func OpsEmailDue(ctx context.Context, db DBTX, now time.Time, workspaceID, campaignID *int64) ([]OpsDueGroup, error) {
	rows, err := db.Query(ctx, query("ops_email_due"), now, workspaceID, campaignID)
	if err != nil {
		return nil, fmt.Errorf("due enrollments: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsDueGroup, error) {
		var g OpsDueGroup
		return g, r.Scan(&g.CampaignID, &g.MailboxID, &g.NoEmail, &g.LeadTimezone, &g.Count, &g.Oldest)
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
	rows, err := db.Query(ctx, query("ops_campaigns"), workspaceID, campaignID)
	if err != nil {
		return nil, fmt.Errorf("campaigns: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsCampaign, error) {
		var c OpsCampaign
		return c, r.Scan(&c.ID, &c.Workspace, &c.Name, &c.Status, &c.WindowTimezone, &c.WindowDays,
			&c.WindowStart, &c.WindowEnd, &c.Active, &c.DeliveryUnknown)
	})
}

// OpsMailbox is a mailbox with its sends in the last 24 hours.
type OpsMailbox struct {
	ID          int64
	Workspace   string
	Address     string
	Status      string
	DailyCap    int
	PausedUntil *time.Time
	PauseReason string
	// CapToday is the cap in force (0 = none); RampNextAt the ramp's next
	// growth, nil without a ramp or once it reached its max.
	CapToday   int
	RampNextAt *time.Time
	Sent24h    int64
}

// OpsMailboxes lists mailboxes as of now, filtered by workspace and by the
// campaigns they serve.
func OpsMailboxes(ctx context.Context, db DBTX, now time.Time, workspaceID, campaignID *int64) ([]OpsMailbox, error) {
	rows, err := db.Query(ctx, query("ops_mailboxes"), now, workspaceID, campaignID)
	if err != nil {
		return nil, fmt.Errorf("mailboxes: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsMailbox, error) {
		var m OpsMailbox
		return m, r.Scan(&m.ID, &m.Workspace, &m.Address, &m.Status, &m.DailyCap, &m.PausedUntil, &m.PauseReason, &m.CapToday, &m.RampNextAt, &m.Sent24h)
	})
}

// OpsSentSince counts the messages sent (or being sent) since since.
func OpsSentSince(ctx context.Context, db DBTX, since time.Time) (int64, error) {
	var n int64
	if err := db.QueryRow(ctx, query("ops_sent_recent"), since).Scan(&n); err != nil {
		return 0, fmt.Errorf("sends since %s: %w", since.Format(time.RFC3339), err)
	}
	return n, nil
}
