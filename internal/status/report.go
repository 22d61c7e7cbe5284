// Package status answers the operator's questions from the database alone:
// what is queued, due, blocked and overdue (Build), and what holds one lead
// or enrollment back (ExplainLead, ExplainEnrollment). Every answer is taken
// at an explicit instant, so output is reproducible under a fixed clock.
package status

import (
	"context"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/opsfilter"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Report is the whole `rindactl status` answer. Its JSON form is a stable
// interface for scripts: the top-level keys never change.
type Report struct {
	GeneratedAt time.Time              `json:"generated_at"`
	Enrich      Enrich                 `json:"enrich"`
	Email       Email                  `json:"email"`
	Breakers    []Breaker              `json:"breakers"`
	Ticks       map[tickkind.Kind]Tick `json:"ticks"`
	Spend       []Spend                `json:"spend"`
}

// Enrich is the enrichment queue.
type Enrich struct {
	// ByStatus has every lead status, zeros included.
	ByStatus map[lead.Status]int64 `json:"by_status"`
	// DueNow counts rows a tick could claim right now.
	DueNow  int64         `json:"due_now"`
	Blocked EnrichBlocked `json:"blocked"`
}

// EnrichBlocked counts leads held back, each under one cause: ceiling first,
// then breaker, then rate limit; the negative cache is its own state.
type EnrichBlocked struct {
	// BreakerOpen: waiting leads of a workspace with an open breaker.
	BreakerOpen int64 `json:"breaker_open"`
	// NegativeCache: unreachable leads still inside their negative cache.
	NegativeCache int64 `json:"negative_cache"`
	// Ceiling: waiting leads of a workspace at its monthly USD ceiling.
	Ceiling int64 `json:"ceiling"`
	// RateLimited: pending leads backing off after a rate-limited call.
	RateLimited int64 `json:"rate_limited"`
}

// Email is the sending queue.
type Email struct {
	// Overdue counts due steps nothing but capacity holds back.
	Overdue              int64        `json:"overdue"`
	OldestOverdueSeconds int64        `json:"oldest_overdue_seconds"`
	Blocked              EmailBlocked `json:"blocked"`
	// DeliveryUnknown counts enrollments whose step went out without an
	// answer; no tick resends them, an operator decides.
	DeliveryUnknown int64      `json:"delivery_unknown"`
	Mailboxes       []Mailbox  `json:"mailboxes"`
	Campaigns       []Campaign `json:"campaigns"`
	Drain           Drain      `json:"drain"`
}

// EmailBlocked counts due steps that cannot go out whatever the capacity,
// each under its first cause in this order. They are not overdue.
type EmailBlocked struct {
	CampaignPaused int64 `json:"campaign_paused"`
	NoEmail        int64 `json:"no_email"`
	NoMailbox      int64 `json:"no_mailbox"`
	MailboxPaused  int64 `json:"mailbox_paused"`
	OutsideWindow  int64 `json:"outside_window"`
}

func (b *EmailBlocked) add(o EmailBlocked) {
	b.CampaignPaused += o.CampaignPaused
	b.NoEmail += o.NoEmail
	b.NoMailbox += o.NoMailbox
	b.MailboxPaused += o.MailboxPaused
	b.OutsideWindow += o.OutsideWindow
}

// Total is the sum of every cause.
func (b EmailBlocked) Total() int64 {
	return b.CampaignPaused + b.NoEmail + b.NoMailbox + b.MailboxPaused + b.OutsideWindow
}

// Mailbox is one sender's backlog and capacity.
type Mailbox struct {
	Workspace string `json:"workspace"`
	Address   string `json:"address"`
	Status    string `json:"status"`
	Overdue   int64  `json:"overdue"`
	// Sent24h counts sends in the rolling 24 hours the daily cap covers.
	Sent24h  int64 `json:"sent_24h"`
	DailyCap int   `json:"daily_cap"`
	// CapToday is the cap in force: DailyCap, lowered while a warm-up ramp
	// grows (0 = no cap); RampNextAt is when the ramp next grows.
	CapToday   int        `json:"cap_today"`
	RampNextAt *time.Time `json:"ramp_next_at"`
	// Remaining is the room left under the cap now; -1 when uncapped.
	Remaining   int64      `json:"remaining"`
	PausedUntil *time.Time `json:"paused_until"`
	PauseReason string     `json:"pause_reason"`
	// BounceRate is Bounces / BounceSends: the hard bounces among its last
	// sends that reached a server (at most the guard's window of 200),
	// what the bounce-rate guard pauses it on; 0 without sends.
	BounceRate  float64 `json:"bounce_rate"`
	Bounces     int64   `json:"bounces"`
	BounceSends int64   `json:"bounce_sends"`

	// For the drain estimate: the overdue rows by when they may go, the
	// taken slots of the cap by when they free, and the warm-up ramp.
	backlog []drainSlot
	taken   []drainSlot
	ramp    rampPlan
	// The follow-ups that take its room first (follow_ups_first): due
	// later by the schedule, and those its overdue rows bring once sent.
	ahead, cascade []followUps
}

// Paused reports whether the mailbox sends nothing at now.
func (m Mailbox) Paused(now time.Time) bool {
	return m.Status != "active" || (m.PausedUntil != nil && m.PausedUntil.After(now))
}

// Campaign is one campaign's backlog.
type Campaign struct {
	Workspace            string       `json:"workspace"`
	Name                 string       `json:"name"`
	Status               string       `json:"status"`
	Active               int64        `json:"active"`
	DeliveryUnknown      int64        `json:"delivery_unknown"`
	Overdue              int64        `json:"overdue"`
	OldestOverdueSeconds int64        `json:"oldest_overdue_seconds"`
	Blocked              EmailBlocked `json:"blocked"`
}

// Breaker is one (workspace, provider) circuit breaker.
type Breaker struct {
	Workspace string     `json:"workspace"`
	Provider  string     `json:"provider"`
	State     string     `json:"state"`
	OpenUntil *time.Time `json:"open_until"`
	Reason    string     `json:"reason"`
}

// Tick sums up one tick kind's recent history.
type Tick struct {
	LastStartedAt *time.Time `json:"last_started_at"`
	LastTickID    string     `json:"last_tick_id"`
	LastHost      string     `json:"last_host"`
	// Running: the last tick has not finished (or died without recording).
	Running            bool           `json:"running"`
	LastSuccessAt      *time.Time     `json:"last_success_at"`
	LastSuccessClaimed *int           `json:"last_success_claimed"`
	LastSuccessCounts  map[string]any `json:"last_success_counts"`
	LastFailureAt      *time.Time     `json:"last_failure_at"`
	LastFailureError   string         `json:"last_failure_error"`
	Runs24h            int64          `json:"runs_24h"`
	Failures24h        int64          `json:"failures_24h"`
}

// Spend is a workspace's provider spend this month.
type Spend struct {
	Workspace  string    `json:"workspace"`
	MonthStart time.Time `json:"month_start"`
	SpentUSD   float64   `json:"spent_usd"`
	// CeilingUSD is nil when the workspace has no ceiling.
	CeilingUSD *float64 `json:"ceiling_usd"`
	// Reached: the spend is at the ceiling without counting calls in
	// flight, so provider calls stop until the month ends.
	Reached bool `json:"ceiling_reached"`
	// InFlightUSD is what calls still in flight reserve of SpentUSD; while
	// they alone bring it to the ceiling, calls wait for them to settle.
	InFlightUSD float64 `json:"in_flight_usd"`
}

// Filter narrows a report to one workspace and/or one campaign (by name).
type Filter struct {
	Workspace string
	Campaign  string
	// EmailOnly leaves the enrichment counts out (what `status --overdue`
	// shows): they count every lead ever enriched, so their cost grows
	// with the history, and the late backlog does not need them.
	EmailOnly bool
}

// FilterError is a filter naming something that does not exist, or a
// campaign name that needs a workspace.
type FilterError = opsfilter.Error

// scope is a Filter resolved to ids.
type scope struct {
	workspaceID *int64
	campaignID  *int64
}

func resolve(ctx context.Context, db store.DBTX, f Filter) (scope, error) {
	var s scope
	var err error
	s.workspaceID, s.campaignID, err = opsfilter.Resolve(ctx, db, f.Workspace, f.Campaign)
	return s, err
}

// MonthStart is the start of now's calendar month in UTC: the period the
// spend ceiling covers.
func MonthStart(now time.Time) time.Time {
	u := now.UTC()
	return time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// Build takes the report at now. db must allow concurrent queries (a pool):
// the enrichment scan runs beside the email queries.
func Build(ctx context.Context, db store.Batcher, now time.Time, f Filter) (*Report, error) {
	sc, err := resolve(ctx, db, f)
	if err != nil {
		return nil, err
	}
	var (
		enrichCounts []store.OpsEnrichCounts
		spend        []store.OpsSpend
		breakers     []store.OpsBreaker
		ticks        []store.OpsTickKind
		samples      []store.OpsTickSample
		due          []store.OpsDueGroup
		campaigns    []store.OpsCampaign
		mailboxes    []store.OpsMailbox
		slots        []store.OpsSlot
		followUps    []store.OpsFollowUp
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if f.EmailOnly {
			return nil
		}
		enrichCounts, err = store.OpsEnrichStatusCounts(gctx, db, now, sc.workspaceID)
		return err
	})
	g.Go(func() (err error) {
		due, err = store.OpsEmailDue(gctx, db, now, sc.workspaceID, sc.campaignID)
		return err
	})
	g.Go(func() error {
		var err error
		if spend, err = store.OpsSpendSince(gctx, db, MonthStart(now), sc.workspaceID); err != nil {
			return err
		}
		if breakers, err = store.OpsBreakers(gctx, db, sc.workspaceID); err != nil {
			return err
		}
		if ticks, err = store.OpsTicks(gctx, db, now); err != nil {
			return err
		}
		if samples, err = store.OpsRecentTicks(gctx, db, tickkind.Email, now, cadenceSamples); err != nil {
			return err
		}
		if campaigns, err = store.OpsCampaigns(gctx, db, sc.workspaceID, sc.campaignID); err != nil {
			return err
		}
		if mailboxes, err = store.OpsMailboxes(gctx, db, now, sequence.BounceWindow, store.OpsScope{WorkspaceID: sc.workspaceID, CampaignID: sc.campaignID}); err != nil {
			return err
		}
		if slots, err = store.OpsMailboxSlots(gctx, db, now, sc.workspaceID, sc.campaignID); err != nil {
			return err
		}
		followUps, err = store.OpsEmailFollowUps(gctx, db, now, now.Add(drainHorizon), store.OpsScope{WorkspaceID: sc.workspaceID, CampaignID: sc.campaignID})
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}

	r := &Report{
		GeneratedAt: now.UTC(),
		Breakers:    make([]Breaker, 0, len(breakers)),
		Ticks:       make(map[tickkind.Kind]Tick, len(tickkind.All)),
		Spend:       make([]Spend, 0, len(spend)),
	}
	for _, b := range breakers {
		r.Breakers = append(r.Breakers, Breaker{Workspace: b.Workspace, Provider: b.Provider, State: b.State, OpenUntil: utc(b.OpenUntil), Reason: redact.String(b.Reason)})
	}
	for _, t := range ticks {
		r.Ticks[t.Kind] = tickFrom(t)
	}
	reached := map[int64]bool{}
	for _, s := range spend {
		sp := Spend{Workspace: s.Workspace, MonthStart: MonthStart(now), SpentUSD: s.SpentUSD, CeilingUSD: s.CeilingUSD, InFlightUSD: s.InFlightUSD}
		sp.Reached = atCeiling(s.SpentUSD, s.CeilingUSD) && !ceilingHeldInFlight(s)
		reached[s.WorkspaceID] = sp.Reached
		r.Spend = append(r.Spend, sp)
	}
	r.Enrich = enrichFrom(enrichCounts, breakers, reached, now)
	r.Email = emailFrom(due, campaigns, mailboxes, slots, now)
	attachFollowUps(&r.Email, mailboxes, followUps)
	r.Email.Drain = estimateDrain(r.Email.Mailboxes, samples, now)
	return r, nil
}

// EmailOverdue is Build's overdue figures alone, at now, over every
// workspace: the steps nothing but sending capacity holds back and the age
// of the oldest in seconds. The email tick exports them as metrics (the
// alert on overdue email), without the enrichment scan Build also makes.
func EmailOverdue(ctx context.Context, db store.Batcher, now time.Time) (steps, oldestSeconds int64, err error) {
	due, err := store.OpsEmailDue(ctx, db, now, nil, nil)
	if err != nil {
		return 0, 0, err
	}
	campaigns, err := store.OpsCampaigns(ctx, db, nil, nil)
	if err != nil {
		return 0, 0, err
	}
	mailboxes, err := store.OpsMailboxes(ctx, db, now, sequence.BounceWindow, store.OpsScope{})
	if err != nil {
		return 0, 0, err
	}
	e := emailFrom(due, campaigns, mailboxes, nil, now)
	return e.Overdue, e.OldestOverdueSeconds, nil
}

func enrichFrom(counts []store.OpsEnrichCounts, breakers []store.OpsBreaker, ceilingReached map[int64]bool, now time.Time) Enrich {
	e := Enrich{ByStatus: make(map[lead.Status]int64, len(lead.Statuses))}
	for _, s := range lead.Statuses {
		e.ByStatus[s] = 0
	}
	open := map[int64]bool{}
	for _, b := range breakers {
		if BreakerOpen(b.State, b.OpenUntil, now) {
			open[b.WorkspaceID] = true
		}
	}
	for _, c := range counts {
		for s, n := range c.ByStatus {
			e.ByStatus[s] += n
		}
		e.DueNow += c.DueNow
		e.Blocked.NegativeCache += c.NegativeCache
		switch {
		case ceilingReached[c.WorkspaceID]:
			e.Blocked.Ceiling += c.Waiting
		case open[c.WorkspaceID]:
			e.Blocked.BreakerOpen += c.Waiting
		default:
			e.Blocked.RateLimited += c.RateLimited
		}
	}
	return e
}

// BreakerOpen reports whether a breaker in state with openUntil stops calls
// at now. An open breaker whose time has run out lets one probe through, so
// it no longer holds leads back.
func BreakerOpen(state string, openUntil *time.Time, now time.Time) bool {
	return state == "open" && openUntil != nil && openUntil.After(now)
}

func emailFrom(due []store.OpsDueGroup, campaigns []store.OpsCampaign, mailboxes []store.OpsMailbox, slots []store.OpsSlot, now time.Time) Email {
	e := Email{Mailboxes: mailboxesFrom(mailboxes, slots)}
	mbIndex := make(map[int64]int, len(mailboxes))
	for i, m := range mailboxes {
		mbIndex[m.ID] = i
	}
	cIndex := make(map[int64]int, len(campaigns))
	windows := make(map[int64]window, len(campaigns))
	e.Campaigns = make([]Campaign, 0, len(campaigns))
	for i, c := range campaigns {
		e.Campaigns = append(e.Campaigns, Campaign{Workspace: c.Workspace, Name: c.Name, Status: c.Status, Active: c.Active, DeliveryUnknown: c.DeliveryUnknown})
		e.DeliveryUnknown += c.DeliveryUnknown
		cIndex[c.ID] = i
		windows[c.ID] = campaignWindow(c)
	}
	oldest := make([]time.Time, len(campaigns))
	var oldestAll time.Time
	for _, g := range due {
		ci, ok := cIndex[g.CampaignID]
		if !ok {
			continue
		}
		camp := &e.Campaigns[ci]
		var mb *Mailbox
		if g.MailboxID != nil {
			if i, ok := mbIndex[*g.MailboxID]; ok {
				mb = &e.Mailboxes[i]
			}
		}
		b, overdue := dueBlocked(g, camp.Status, mb, windows[g.CampaignID], now)
		camp.Blocked.add(b)
		e.Blocked.add(b)
		if !overdue {
			continue
		}
		camp.Overdue += g.Count
		e.Overdue += g.Count
		if mb != nil {
			mb.Overdue += g.Count
			mb.backlog = append(mb.backlog, drainSlot{g.WaitsUntil, g.Count})
		}
		oldest[ci] = earliest(oldest[ci], g.Oldest)
		oldestAll = earliest(oldestAll, g.Oldest)
	}
	for i := range e.Campaigns {
		e.Campaigns[i].OldestOverdueSeconds = ageSeconds(oldest[i], now)
	}
	e.OldestOverdueSeconds = ageSeconds(oldestAll, now)
	return e
}

// mailboxesFrom is the report's mailboxes, each with the cap's slots its
// sends and leased rows take (the drain estimate frees them as they age out).
func mailboxesFrom(mailboxes []store.OpsMailbox, slots []store.OpsSlot) []Mailbox {
	out := make([]Mailbox, 0, len(mailboxes))
	index := make(map[int64]int, len(mailboxes))
	for i, m := range mailboxes {
		mb := Mailbox{Workspace: m.Workspace, Address: m.Address, Status: m.Status, Sent24h: m.Sent24h, DailyCap: m.Cap.Daily,
			CapToday: m.CapToday, RampNextAt: utc(m.RampNextAt), Remaining: -1, PausedUntil: utc(m.PausedUntil), PauseReason: redact.String(m.PauseReason),
			Bounces: m.RecentBounces, BounceSends: m.RecentSends,
			ramp: rampPlan{cap: m.Cap, level: m.RampLevel, dueAt: m.RampDueAt}}
		if m.RecentSends > 0 {
			mb.BounceRate = float64(m.RecentBounces) / float64(m.RecentSends)
		}
		if m.CapToday > 0 {
			mb.Remaining = max(int64(m.CapToday)-m.Sent24h, 0)
		}
		out = append(out, mb)
		index[m.ID] = i
	}
	for _, s := range slots {
		if i, ok := index[s.MailboxID]; ok {
			out[i].taken = append(out[i].taken, drainSlot{s.FreesAt, s.N})
		}
	}
	return out
}

// dueBlocked is what holds a group of due steps back, the first block that
// applies in the order status reports them, or overdue when none does: only
// sending capacity holds it back. mb is the group's mailbox (nil when it has
// none or the report does not show it).
func dueBlocked(g store.OpsDueGroup, campaignStatus string, mb *Mailbox, w window, now time.Time) (b EmailBlocked, overdue bool) {
	switch {
	case campaignStatus != "active":
		b.CampaignPaused = g.Count
	case g.NoEmail:
		b.NoEmail = g.Count
	case g.MailboxID == nil:
		b.NoMailbox = g.Count
	case mb != nil && mb.Paused(now):
		b.MailboxPaused = g.Count
	case !w.open(now, g.LeadTimezone):
		b.OutsideWindow = g.Count
	default:
		return b, true
	}
	return b, false
}

// earliest is the earlier of two times, the zero time counting as none.
func earliest(cur, t time.Time) time.Time {
	if cur.IsZero() || t.Before(cur) {
		return t
	}
	return cur
}

func ageSeconds(t, now time.Time) int64 {
	if t.IsZero() || !t.Before(now) {
		return 0
	}
	return int64(now.Sub(t) / time.Second)
}

func tickFrom(t store.OpsTickKind) Tick {
	k := Tick{
		LastStartedAt: utc(t.LastStartedAt), LastTickID: t.LastTickID, LastHost: t.LastHost,
		Running:            t.LastStartedAt != nil && t.LastExitStatus == nil,
		LastSuccessAt:      utc(t.LastSuccessFinishedAt),
		LastSuccessClaimed: t.LastSuccessClaimed,
		LastSuccessCounts:  t.LastSuccessCounts,
		LastFailureAt:      utc(t.LastFailureStartedAt),
		LastFailureError:   redact.String(t.LastFailureError),
		Runs24h:            t.Runs24h,
		Failures24h:        t.Failures24h,
	}
	if k.LastSuccessAt == nil {
		k.LastSuccessAt = utc(t.LastSuccessStartedAt)
	}
	return k
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// SortedKinds returns the report's tick kinds in tickkind.All order.
func (r *Report) SortedKinds() []tickkind.Kind {
	kinds := make([]tickkind.Kind, 0, len(r.Ticks))
	for k := range r.Ticks {
		kinds = append(kinds, k)
	}
	order := map[tickkind.Kind]int{}
	for i, k := range tickkind.All {
		order[k] = i
	}
	sort.Slice(kinds, func(i, j int) bool { return order[kinds[i]] < order[kinds[j]] })
	return kinds
}
