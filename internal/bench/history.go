package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/prune"
	"github.com/rindactl/rindactl/internal/sendcap"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/benchstore"
)

// Defaults of `rindactl bench history`: the short form, a year at about a
// hundredth of the scale (20M sends, 10M ledger rows, 1M events),
// which runs in a few minutes.
const (
	HistorySequencesDefault = 50000
	HistoryCallsDefault     = 100000
	HistoryEventsDefault    = 10000
	HistoryTickRunsDefault  = 20000
	HistoryStepsDefault     = 3000
	HistoryLeadsDefault     = 5000
	HistoryPairsDefault     = 3
)

// sendsPerSequence is how many sends each history enrollment has.
const sendsPerSequence = 4

// HistoryConfig sets up a history run: what a year left behind, and what
// each measured round drains.
type HistoryConfig struct {
	URL string
	// Sequences enrollments with 4 sends each, Calls ledger rows, Events
	// and TickRuns, spread over the last year.
	Sequences, Calls, Events, TickRuns int
	// Each round drains Steps email steps over Mailboxes and Leads
	// enrichment leads, in both schemas.
	Steps, Leads, Mailboxes int
	// Pairs rounds are taken before the prune and as many after.
	Pairs int
}

// HistoryRound is one interleaved pair: the same drains in a fresh schema
// and in the one holding the history, and `status --overdue` in each with
// the round's backlog due.
type HistoryRound struct {
	// Phase is "history" (a year of rows) or "pruned" (after prune at its
	// default keeps and a VACUUM, as autovacuum would follow).
	Phase string `json:"phase"`
	// Postgres CPU microseconds per sent step and per enriched lead.
	FreshEmailUS    float64 `json:"fresh_email_pg_us_per_send"`
	HistoryEmailUS  float64 `json:"history_email_pg_us_per_send"`
	FreshEnrichUS   float64 `json:"fresh_enrich_pg_us_per_lead"`
	HistoryEnrichUS float64 `json:"history_enrich_pg_us_per_lead"`
	// Seconds to build `status --overdue` (every status query, the table).
	FreshStatusSeconds   float64 `json:"fresh_status_seconds"`
	HistoryStatusSeconds float64 `json:"history_status_seconds"`
}

// HistoryPrune is what pruning the year took.
type HistoryPrune struct {
	Seconds float64 `json:"seconds"`
	Deleted int64   `json:"deleted"`
	// PostgresCPUPerRowUS is Postgres CPU per deleted row.
	PostgresCPUPerRowUS *float64     `json:"postgres_cpu_us_per_row,omitempty"`
	Tables              []TableCount `json:"tables"`
	VacuumSeconds       float64      `json:"vacuum_seconds"`
}

// TableCount is a table's rows before and after the prune.
type TableCount struct {
	Table  string `json:"table"`
	Before int64  `json:"before"`
	After  int64  `json:"after"`
}

// HistoryResult is `rindactl bench history --output json`.
type HistoryResult struct {
	Config      HistoryConfig  `json:"-"`
	SeedSeconds float64        `json:"seed_seconds"`
	Rounds      []HistoryRound `json:"rounds"`
	Prune       HistoryPrune   `json:"prune"`
	// Per phase: the per-pair ratios history / fresh of Postgres CPU per
	// row (target <= 1.10 once pruned), and the slowest status build.
	Email               map[string]PairSummary `json:"email_history_over_fresh"`
	Enrich              map[string]PairSummary `json:"enrich_history_over_fresh"`
	StatusSecondsMaxima map[string]float64     `json:"status_seconds_max"`
}

// historyTables are the tables the history fills, as prune names them.
var historyTables = []string{"sends", "provider_calls", "events", "tick_runs", "enrollments", "leads", "lead_enrichment"}

// History seeds a year of history into one scratch schema beside a fresh
// one, then measures the email and enrichment drains' Postgres CPU per row
// and `status --overdue` in both as interleaved pairs: cfg.Pairs rounds
// with the history as it is, then prune (default keeps) and VACUUM, then
// cfg.Pairs rounds more.
func History(ctx context.Context, cfg HistoryConfig) (res HistoryResult, err error) {
	res.Config = cfg
	sizes := []int{cfg.Sequences, cfg.Calls, cfg.Events, cfg.TickRuns, cfg.Steps, cfg.Leads, cfg.Mailboxes, cfg.Pairs}
	if slices.ContainsFunc(sizes, func(n int) bool { return n < 1 }) {
		return res, fmt.Errorf("bench history: every size must be at least 1: %+v", cfg)
	}
	srv, err := smtptest.Start(smtptest.Options{CountOnly: true})
	if err != nil {
		return res, err
	}
	defer srv.Close()
	var sides [2]*historySide // fresh, history
	for i := range sides {
		s, err := newScratch(ctx, cfg.URL)
		if err != nil {
			return res, err
		}
		defer func() { err = errors.Join(err, s.Close(ctx)) }()
		if sides[i], err = newHistorySide(ctx, s, srv.URL(""), cfg.Mailboxes); err != nil {
			return res, err
		}
		defer func() { err = errors.Join(err, sides[i].mailer.Close()) }()
	}
	fresh, old := sides[0], sides[1]

	start := time.Now()
	if err := old.seed(ctx, cfg); err != nil {
		return res, err
	}
	for _, side := range sides {
		if err := side.s.analyze(ctx, historyTables...); err != nil {
			return res, err
		}
	}
	res.SeedSeconds = time.Since(start).Seconds()
	pm, err := Postmaster(ctx, old.s.Pool)
	if err != nil {
		return res, err
	}

	p := &historyPairs{cfg: cfg, fresh: fresh, old: old, pm: pm}
	if err := p.run(ctx, "history", &res); err != nil {
		return res, err
	}
	if res.Prune, err = old.prune(ctx, pm); err != nil {
		return res, err
	}
	if err := p.run(ctx, "pruned", &res); err != nil {
		return res, err
	}
	res.summarize()
	return res, nil
}

// historyPairs measures the two sides in interleaved pairs.
type historyPairs struct {
	cfg        HistoryConfig
	fresh, old *historySide
	pm         int
	round      int
}

// run measures cfg.Pairs pairs of phase into res.Rounds.
func (p *historyPairs) run(ctx context.Context, phase string, res *HistoryResult) error {
	for i := range p.cfg.Pairs {
		p.round++
		r := HistoryRound{Phase: phase}
		// Alternate which side goes first, so a drift of the machine
		// within a pair favours neither.
		order := []*historySide{p.fresh, p.old}
		if i%2 == 1 {
			order = []*historySide{p.old, p.fresh}
		}
		for _, side := range order {
			m, err := side.measure(ctx, p.cfg, p.round, p.pm)
			if err != nil {
				return err
			}
			if side == p.fresh {
				r.FreshEmailUS, r.FreshEnrichUS, r.FreshStatusSeconds = m.emailUS, m.enrichUS, m.statusSeconds
			} else {
				r.HistoryEmailUS, r.HistoryEnrichUS, r.HistoryStatusSeconds = m.emailUS, m.enrichUS, m.statusSeconds
			}
		}
		res.Rounds = append(res.Rounds, r)
	}
	return nil
}

func (res *HistoryResult) summarize() {
	res.Email, res.Enrich, res.StatusSecondsMaxima = map[string]PairSummary{}, map[string]PairSummary{}, map[string]float64{}
	for _, phase := range []string{"history", "pruned"} {
		var fe, he, fn, hn []float64
		for _, r := range res.Rounds {
			if r.Phase != phase {
				continue
			}
			fe, he = append(fe, r.FreshEmailUS), append(he, r.HistoryEmailUS)
			fn, hn = append(fn, r.FreshEnrichUS), append(hn, r.HistoryEnrichUS)
			res.StatusSecondsMaxima[phase] = max(res.StatusSecondsMaxima[phase], r.HistoryStatusSeconds, r.FreshStatusSeconds)
		}
		if s, err := SummarizePairs(he, fe); err == nil {
			res.Email[phase] = s
		}
		if s, err := SummarizePairs(hn, fn); err == nil {
			res.Enrich[phase] = s
		}
	}
}

// historySide is one scratch schema of the comparison.
type historySide struct {
	s         *scratch
	smtpURL   string
	mailboxes []int64
	workspace int64
	campaign  int64 // the history's campaign
	guard     *guard.Guard
	mailer    *sequence.Mailer
}

// newHistorySide sets up what both schemas share: workspace bench with a
// ceiling, the history's campaign over the mailboxes (empty in the fresh
// schema), and a guard that charges every call, so each one writes the
// ledger and the month's spend.
func newHistorySide(ctx context.Context, s *scratch, smtpURL string, mailboxes int) (*historySide, error) {
	side := &historySide{s: s, smtpURL: smtpURL}
	var err error
	if _, side.campaign, err = importCampaign(ctx, s, "history", smtpURL, mailboxes, sendcap.Cap{}); err != nil {
		return nil, err
	}
	if side.workspace, err = store.WorkspaceID(ctx, s.Pool, "bench"); err != nil {
		return nil, err
	}
	ceiling := 1e9
	if _, err := store.SetWorkspaceCeiling(ctx, s.Pool, "bench", &ceiling, "bench"); err != nil {
		return nil, err
	}
	if side.mailboxes, err = benchstore.BenchMailboxIDs(ctx, s.Pool); err != nil {
		return nil, err
	}
	side.guard = guard.New(s.Pool, guard.Config{Providers: map[string]providerspec.Limits{
		noopFinder{}.Name(): {CostUSD: 0.001, BillMisses: true},
	}}, nil)
	side.mailer = sequence.NewMailer(sequence.MailerOptions{})
	return side, nil
}

// seed writes the year: sequences with their sends and enrichment, the
// ledger with its monthly counters, events and tick runs.
func (side *historySide) seed(ctx context.Context, cfg HistoryConfig) error {
	return benchstore.BenchSeedHistory(ctx, side.s.Pool, benchstore.BenchHistory{
		WorkspaceID: side.workspace, CampaignID: side.campaign, MailboxIDs: side.mailboxes,
		Sequences: cfg.Sequences, Calls: cfg.Calls, Events: cfg.Events, TickRuns: cfg.TickRuns,
	})
}

// sideFigures are one side's figures in one round.
type sideFigures struct {
	emailUS, enrichUS, statusSeconds float64
}

// measure loads round's backlog (cfg.Steps due steps in a campaign of its
// own, cfg.Leads due leads), times `status --overdue` over it, then drains
// both, reading the cluster's Postgres CPU around each drain.
func (side *historySide) measure(ctx context.Context, cfg HistoryConfig, round int, pm int) (sideFigures, error) {
	var f sideFigures
	tag := fmt.Sprintf("round%d", round)
	_, campaign, err := importCampaign(ctx, side.s, tag, side.smtpURL, cfg.Mailboxes, sendcap.Cap{})
	if err != nil {
		return f, err
	}
	if err := benchstore.BenchSeedRoundSteps(ctx, side.s.Pool, side.workspace, campaign, side.mailboxes, cfg.Steps, tag); err != nil {
		return f, fmt.Errorf("loading round %d's steps: %w", round, err)
	}
	if err := benchstore.BenchSeedRoundLeads(ctx, side.s.Pool, side.workspace, cfg.Leads, tag+"e"); err != nil {
		return f, fmt.Errorf("loading round %d's leads: %w", round, err)
	}
	if err := side.s.analyze(ctx, "leads", "enrollments", "lead_enrichment"); err != nil {
		return f, err
	}

	start := time.Now()
	rep, err := status.Build(ctx, side.s.Pool, time.Now(), status.Filter{EmailOnly: true})
	if err == nil {
		err = status.WriteTable(io.Discard, rep, status.TableOptions{Overdue: true})
	}
	if err != nil {
		return f, fmt.Errorf("status --overdue: %w", err)
	}
	f.statusSeconds = time.Since(start).Seconds()

	cpu := SampleCPU(pm)
	if _, err := drainEmail(ctx, side.s.Pool, side.mailer, cfg.Mailboxes, cfg.Steps); err != nil {
		return f, err
	}
	after := SampleCPU(pm)
	f.emailUS = postgresPerItem(cpu, after, cfg.Steps)

	cpu = SampleCPU(pm)
	if err := drainEnrichment(ctx, side.s.Pool, enrich.TickConfig{
		Finders: []enrich.Finder{noopFinder{}}, Guard: side.guard, Batch: ClaimBatchDefault, Concurrency: ClaimConcurrencyDefault,
	}, cfg.Leads); err != nil {
		return f, err
	}
	f.enrichUS = postgresPerItem(cpu, SampleCPU(pm), cfg.Leads)
	return f, nil
}

// postgresPerItem is the Postgres CPU microseconds per item between two
// samples; 0 when Postgres is not on this machine.
func postgresPerItem(from, to CPUSample, items int) float64 {
	if _, pg := from.PerItem(to, items); pg != nil {
		return *pg
	}
	return 0
}

// prune runs `rindactl prune`'s work at its default keeps over the whole
// history, then VACUUM ANALYZE, as autovacuum would after a mass delete.
func (side *historySide) prune(ctx context.Context, pm int) (HistoryPrune, error) {
	var p HistoryPrune
	counts := func() (map[string]int64, error) {
		out := map[string]int64{}
		for _, t := range historyTables {
			n, err := side.s.count(ctx, t)
			if err != nil {
				return nil, err
			}
			out[t] = n
		}
		return out, nil
	}
	before, err := counts()
	if err != nil {
		return p, err
	}
	now, err := store.DBNow(ctx, side.s.Pool)
	if err != nil {
		return p, err
	}
	cpu := SampleCPU(pm)
	start := time.Now()
	rep, err := prune.Run(ctx, side.s.Pool, prune.Options{Now: now})
	if err != nil {
		return p, err
	}
	p.Seconds, p.Deleted = time.Since(start).Seconds(), rep.Deleted
	if _, pg := cpu.PerItem(SampleCPU(pm), int(max(rep.Deleted, 1))); pg != nil {
		p.PostgresCPUPerRowUS = pg
	}
	start = time.Now()
	if err := side.s.analyze(ctx, historyTables...); err != nil {
		return p, err
	}
	p.VacuumSeconds = time.Since(start).Seconds()
	after, err := counts()
	if err != nil {
		return p, err
	}
	for _, t := range historyTables {
		p.Tables = append(p.Tables, TableCount{Table: t, Before: before[t], After: after[t]})
	}
	return p, nil
}
