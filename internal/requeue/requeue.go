// Package requeue moves rows a tick gave up on back into the queue: leads
// that are unreachable or whose enrichment failed, and enrollments whose
// step failed or whose delivery is unknown. It works in small transactions that claim like a tick (FOR
// UPDATE SKIP LOCKED), so a running tick never waits on it for more than
// one batch, and it leaves one audit-log row per run.
package requeue

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/opsfilter"
	"github.com/rindactl/rindactl/internal/store"
)

// BatchSizeDefault is how many rows one transaction moves: small enough
// that its locks are held for milliseconds, large enough that 86,000 rows
// take a couple of dozen commits.
const BatchSizeDefault = 5000

// ValidStatuses lists every status --status accepts: the lead statuses,
// then the enrollment statuses that only an operator moves.
func ValidStatuses() []string {
	var out []string
	for _, s := range lead.Requeueable {
		out = append(out, string(s))
	}
	for _, s := range enrollment.Requeueable {
		out = append(out, string(s))
	}
	return out
}

// Filter selects the rows to requeue. Zero fields do not filter.
type Filter struct {
	Status    string        `json:"status"`
	Workspace string        `json:"workspace,omitempty"`
	Provider  string        `json:"provider,omitempty"`
	Campaign  string        `json:"campaign,omitempty"`
	OlderThan time.Duration `json:"-"`
	// Limit caps how many rows one run moves; 0 means all.
	Limit int `json:"limit,omitempty"`
	// Refind (leads only) forgets what finders already answered for the
	// leads: an address found but not verified yet, and the finders that
	// found nothing. Every finder is then asked, and paid, again.
	Refind bool `json:"refind,omitempty"`
}

// Leads reports whether the filter selects leads (else enrollments).
func (f Filter) Leads() bool { return slices.Contains(lead.Requeueable, lead.Status(f.Status)) }

// Describe renders the filter as one line for prompts and summaries.
func (f Filter) Describe() string {
	parts := []string{"status=" + f.Status}
	if f.Workspace != "" {
		parts = append(parts, "workspace="+f.Workspace)
	}
	if f.Provider != "" {
		parts = append(parts, "provider="+f.Provider)
	}
	if f.Campaign != "" {
		parts = append(parts, "campaign="+f.Campaign)
	}
	if f.OlderThan > 0 {
		parts = append(parts, "older-than="+f.OlderThan.String())
	}
	if f.Limit > 0 {
		parts = append(parts, fmt.Sprintf("limit=%d", f.Limit))
	}
	if f.Refind {
		parts = append(parts, "refind")
	}
	return strings.Join(parts, " ")
}

// auditFilters is the filter as the audit log stores it.
func (f Filter) auditFilters(batchSize int) map[string]any {
	m := map[string]any{"status": f.Status, "batch_size": batchSize}
	if f.Workspace != "" {
		m["workspace"] = f.Workspace
	}
	if f.Provider != "" {
		m["provider"] = f.Provider
	}
	if f.Campaign != "" {
		m["campaign"] = f.Campaign
	}
	if f.OlderThan > 0 {
		m["older_than"] = f.OlderThan.String()
	}
	if f.Limit > 0 {
		m["limit"] = f.Limit
	}
	if f.Refind {
		m["refind"] = true
	}
	return m
}

// FilterError is a filter that cannot be run as given; the message names
// the fix.
type FilterError = opsfilter.Error

// Group counts rows per workspace and provider (leads) or campaign
// (enrollments).
type Group struct {
	Workspace string `json:"workspace"`
	Provider  string `json:"provider,omitempty"`
	Campaign  string `json:"campaign,omitempty"`
	Count     int64  `json:"count"`
}

// Plan is what a filter matches now (a dry run).
type Plan struct {
	Filter  Filter `json:"filter"`
	Matched int64  `json:"matched"`
	// WouldMove is Matched capped by the filter's Limit.
	WouldMove int64   `json:"would_move"`
	Groups    []Group `json:"groups"`

	scope store.OpsRequeueFilter
}

// Options tune Run.
type Options struct {
	// BatchSize rows per transaction; 0 means BatchSizeDefault.
	BatchSize int
	// Actor is who asked (the OS user), for the audit log.
	Actor string
	// Progress, when set, is called after each committed batch with the
	// number of rows moved so far.
	Progress func(moved int64)
}

// Result is what a run did.
type Result struct {
	Moved   int64   `json:"moved"`
	Batches int     `json:"batches"`
	Groups  []Group `json:"groups"`
	AuditID int64   `json:"audit_id"`
}

// Prepare validates f, resolves its names and counts what it matches.
func Prepare(ctx context.Context, db store.DBTX, f Filter) (*Plan, error) {
	sc, err := validate(ctx, db, f)
	if err != nil {
		return nil, err
	}
	var groups []store.OpsRequeueGroup
	if f.Leads() {
		groups, err = store.OpsCountRequeueLeads(ctx, db, lead.Status(f.Status), sc)
	} else {
		groups, err = store.OpsCountRequeueEnrollments(ctx, db, enrollment.Status(f.Status), sc)
	}
	if err != nil {
		return nil, err
	}
	p := &Plan{Filter: f, Groups: toGroups(f, groups), scope: sc}
	for _, g := range p.Groups {
		p.Matched += g.Count
	}
	p.WouldMove = p.Matched
	if f.Limit > 0 {
		p.WouldMove = min(p.Matched, int64(f.Limit))
	}
	return p, nil
}

func validate(ctx context.Context, db store.DBTX, f Filter) (store.OpsRequeueFilter, error) {
	var sc store.OpsRequeueFilter
	valid := ValidStatuses()
	switch {
	case f.Status == "":
		return sc, &FilterError{Msg: "--status is required: one of " + strings.Join(valid, ", ")}
	case !slices.Contains(valid, f.Status):
		return sc, &FilterError{Msg: fmt.Sprintf("cannot requeue status %q: use one of %s", f.Status, strings.Join(valid, ", "))}
	case f.Limit < 0:
		return sc, &FilterError{Msg: fmt.Sprintf("--limit %d: use a positive number (or 0 for all)", f.Limit)}
	case f.OlderThan < 0:
		return sc, &FilterError{Msg: fmt.Sprintf("--older-than %s: use a positive duration such as 24h", f.OlderThan)}
	case f.Leads() && f.Campaign != "":
		return sc, &FilterError{Msg: "--campaign applies to enrollments (--status=failed or delivery_unknown), not to leads"}
	case !f.Leads() && f.Provider != "":
		return sc, &FilterError{Msg: "--provider applies to leads (--status=unreachable or enrichment_failed), not to enrollments"}
	case !f.Leads() && f.Refind:
		return sc, &FilterError{Msg: "--refind applies to leads (--status=unreachable or enrichment_failed), not to enrollments"}
	}
	sc.Refind = f.Refind
	var err error
	if sc.WorkspaceID, sc.CampaignID, err = opsfilter.Resolve(ctx, db, f.Workspace, f.Campaign); err != nil {
		return sc, err
	}
	if f.Provider != "" {
		sc.Provider = &f.Provider
	}
	if f.OlderThan > 0 {
		sc.OlderThan = &f.OlderThan
	}
	return sc, nil
}

// Run moves the plan's rows in batches of opts.BatchSize, one transaction
// each, and records one audit-log row with the filters and the count moved
// (also when it stops early on an error or a cancelled context).
func Run(ctx context.Context, pool *pgxpool.Pool, p *Plan, opts Options) (Result, error) {
	batch := opts.BatchSize
	if batch <= 0 {
		batch = BatchSizeDefault
	}
	var res Result
	counts := map[Group]int64{}
	runErr := func() error {
		for {
			want := batch
			if p.Filter.Limit > 0 {
				left := int64(p.Filter.Limit) - res.Moved
				if left <= 0 {
					return nil
				}
				want = int(min(int64(batch), left))
			}
			var groups []store.OpsRequeueGroup
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				var err error
				if p.Filter.Leads() {
					groups, err = store.OpsRequeueLeadsBatch(ctx, tx, lead.Status(p.Filter.Status), p.scope, want)
				} else {
					groups, err = store.OpsRequeueEnrollmentsBatch(ctx, tx, enrollment.Status(p.Filter.Status), p.scope, want)
				}
				return err
			})
			if err != nil {
				return err
			}
			var moved int64
			for _, g := range toGroups(p.Filter, groups) {
				moved += g.Count
				key := g
				key.Count = 0
				counts[key] += g.Count
			}
			if moved == 0 {
				return nil
			}
			res.Moved += moved
			res.Batches++
			if opts.Progress != nil {
				opts.Progress(res.Moved)
			}
		}
	}()
	for g, n := range counts {
		g.Count = n
		res.Groups = append(res.Groups, g)
	}
	slices.SortFunc(res.Groups, func(a, b Group) int {
		return strings.Compare(a.Workspace+"\x00"+a.Provider+a.Campaign, b.Workspace+"\x00"+b.Provider+b.Campaign)
	})
	// The audit row is written even after a failure or Ctrl-C: what was
	// moved stays moved, and the log must say so.
	filters := p.Filter.auditFilters(batch)
	if runErr != nil {
		filters["stopped"] = runErr.Error()
	}
	id, err := store.InsertAudit(context.WithoutCancel(ctx), pool, store.Audit{Actor: opts.Actor, Action: "requeue", Filters: filters, Affected: res.Moved})
	res.AuditID = id
	if runErr != nil {
		return res, fmt.Errorf("requeue stopped after %d row(s): %w", res.Moved, runErr)
	}
	return res, err
}

func toGroups(f Filter, rows []store.OpsRequeueGroup) []Group {
	out := make([]Group, 0, len(rows))
	for _, r := range rows {
		g := Group{Workspace: r.Workspace, Count: r.Count}
		if f.Leads() {
			g.Provider = r.Key
		} else {
			g.Campaign = r.Key
		}
		out = append(out, g)
	}
	return out
}
