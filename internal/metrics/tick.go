package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Metrics is what one tick process exports. Two kinds of series, kept
// apart so the per-kind textfiles and Pushgateway groups never carry the
// same series twice:
//
//   - this run's figures, gauges named rindactl_tick_last_… and labelled
//     with the tick kind (each kind writes only its own);
//   - database-wide series: counters whose running totals live in Postgres
//     (every tick adds its counts with Flush, so they grow across runs and
//     hosts) and gauges read from Postgres; each is exported by the one
//     tick kind that owns it (owner), whichever kinds contributed.
//
// A nil *Metrics records nothing.
type Metrics struct {
	// run holds this run's gauges; shared the database-wide series.
	run, shared *prometheus.Registry

	lastDuration    *prometheus.GaugeVec
	lastMaxDuration *prometheus.GaugeVec
	lastSuccess     *prometheus.GaugeVec
	lastOutcomes    *prometheus.GaugeVec
	breakersOpen    *prometheus.GaugeVec
	spend           *prometheus.GaugeVec
	creditsLeft     *prometheus.GaugeVec
	runway          *prometheus.GaugeVec

	mu sync.Mutex
	// counts are this run's additions to the running totals, not yet
	// flushed.
	counts map[seriesKey]int64
	// ownSuccess is this run's own last success per kind, which the
	// database may not show yet when Refresh reads it.
	ownSuccess map[string]time.Time
}

// The per-run gauges every tick kind exports, labelled by kind.
const (
	lastDurationName    = "rindactl_tick_last_duration_seconds"
	lastMaxDurationName = "rindactl_tick_last_max_duration_seconds"
	lastSuccessName     = "rindactl_tick_last_success_timestamp_seconds"
	lastOutcomesName    = "rindactl_tick_last_outcomes"

	creditsRemainingName = "rindactl_provider_credits_remaining"
	runwayName           = "rindactl_provider_runway_seconds"
)

// RunGauges lists the per-run gauge names (docs and the deploy/ checks).
func RunGauges() []string {
	return []string{lastDurationName, lastMaxDurationName, lastSuccessName, lastOutcomesName}
}

// NewMetrics returns a Metrics with nothing recorded.
func NewMetrics() *Metrics {
	m := &Metrics{
		run:             prometheus.NewRegistry(),
		shared:          prometheus.NewRegistry(),
		counts:          map[seriesKey]int64{},
		ownSuccess:      map[string]time.Time{},
		lastDuration:    newGaugeVec(lastDurationName, "Wall time of the last tick of this kind (this host, or the last host to push).", "kind"),
		lastMaxDuration: newGaugeVec(lastMaxDurationName, "The --max-duration of the last tick of this kind: its schedule's interval less a margin (alerts derive the interval from it).", "kind"),
		lastSuccess:     newGaugeVec(lastSuccessName, "Unix time a tick of this kind last finished successfully (any host).", "kind"),
		lastOutcomes:    newGaugeVec(lastOutcomesName, "What the last tick of this kind did, by outcome (leads, messages or events of that run; the _total counters hold the running totals).", "kind", "outcome"),
		breakersOpen:    newGaugeVec("rindactl_breakers_open", "Breakers refusing calls now (open or half-open), by provider, over all workspaces.", "provider"),
		spend:           newGaugeVec("rindactl_workspace_spend_usd", "Provider spend this UTC month, by workspace.", "workspace"),
		creditsLeft: newGaugeVec(creditsRemainingName,
			"Credits a provider account has left, as its account endpoint last reported them; key is host (the host's key) or the workspace with its own key.", "provider", "key"),
		runway: newGaugeVec(runwayName,
			"How long a provider account's credits last at its billed calls of the last hour (every workspace on that key), as rindactl providers shows it; absent when nothing was billed in the last hour.", "provider", "key"),
	}
	m.run.MustRegister(m.lastDuration, m.lastMaxDuration, m.lastSuccess, m.lastOutcomes)
	return m
}

func newGaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

// ObserveTick records a finished tick of kind: its duration, its
// --max-duration and, when it succeeded, when it finished.
func (m *Metrics) ObserveTick(kind string, d, maxDuration time.Duration, ok bool, finished time.Time) {
	if m == nil {
		return
	}
	m.lastDuration.WithLabelValues(kind).Set(d.Seconds())
	if maxDuration > 0 {
		m.lastMaxDuration.WithLabelValues(kind).Set(maxDuration.Seconds())
	}
	if ok {
		m.mu.Lock()
		m.ownSuccess[kind] = finished
		m.mu.Unlock()
		m.lastSuccess.WithLabelValues(kind).Set(float64(finished.Unix()))
	}
}

// ObserveOutcomes records what a tick of kind did, by outcome.
func (m *Metrics) ObserveOutcomes(kind string, outcomes map[string]int) {
	if m == nil {
		return
	}
	for outcome, n := range outcomes {
		m.lastOutcomes.WithLabelValues(kind, outcome).Set(float64(n))
	}
}

// AddLeads counts n leads that ended with outcome.
func (m *Metrics) AddLeads(outcome string, n int) {
	m.count(leadsTotal, int64(n), outcome)
}

// ProviderRequest counts one settled provider call (the guard calls it).
func (m *Metrics) ProviderRequest(provider, class string) {
	m.count(providerRequestsTotal, 1, provider, class)
}

// GuardBlocked counts one call the guards refused.
func (m *Metrics) GuardBlocked(provider, reason string) {
	m.count(guardBlockedTotal, 1, provider, reason)
}

// CreditsRemaining records what a provider account has left; key is
// "host" or the name of the workspace whose own key it is. The accounts
// are shared by every process: the enrich tick exports them.
func (m *Metrics) CreditsRemaining(provider, key string, credits int64) {
	if m == nil {
		return
	}
	m.creditsLeft.WithLabelValues(provider, key).Set(float64(credits))
}

// ProviderRunway records how long a provider account's credits last at
// the last hour's billed pace (credits.Runway); key as CreditsRemaining.
func (m *Metrics) ProviderRunway(provider, key string, d time.Duration) {
	if m == nil {
		return
	}
	m.runway.WithLabelValues(provider, key).Set(d.Seconds())
}

// EventDelivered counts one Slack post of an event, by result.
func (m *Metrics) EventDelivered(kind, result string) {
	m.count(eventsDeliveredTotal, 1, kind, result)
}

// Refresh reads the database-wide gauges kind owns, and kind's last
// success on any host.
func (m *Metrics) Refresh(ctx context.Context, db store.DBTX, kind string) error {
	if m == nil {
		return nil
	}
	if tickkind.Kind(kind) == tickkind.Enrich {
		open, err := store.OpenBreakers(ctx, db)
		if err != nil {
			return err
		}
		for p, n := range open {
			m.breakersOpen.WithLabelValues(p).Set(float64(n))
		}
		spend, err := store.MonthSpend(ctx, db)
		if err != nil {
			return err
		}
		for w, usd := range spend {
			m.spend.WithLabelValues(w).Set(usd)
		}
		if err := registerOnce(m.shared, m.breakersOpen, m.spend, m.creditsLeft, m.runway); err != nil {
			return err
		}
	}
	t, err := store.LastTickSuccess(ctx, db, kind)
	if err != nil {
		return err
	}
	m.mu.Lock()
	own, ok := m.ownSuccess[kind]
	m.mu.Unlock()
	if t != nil && t.After(own) {
		own, ok = *t, true
	}
	if ok {
		m.lastSuccess.WithLabelValues(kind).Set(float64(own.Unix()))
	}
	return nil
}

// AddShared adds a database-wide collector this tick kind owns (the email
// tick's mailbox totals).
func (m *Metrics) AddShared(c prometheus.Collector) error {
	if m == nil {
		return nil
	}
	return registerOnce(m.shared, c)
}

// registerOnce registers collectors, a collector already there being fine.
func registerOnce(reg *prometheus.Registry, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			if are := (prometheus.AlreadyRegisteredError{}); !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}

// ExportOptions says where Export sends the metrics; empty fields skip.
type ExportOptions struct {
	// File is the node_exporter textfile path (…/rindactl_enrich.prom):
	// one file per tick kind, all in one directory.
	File string
	// PushgatewayURL is the Pushgateway base URL. A push replaces the
	// metrics of its group. Everything goes to the group of Job (the tick
	// kind: rindactl_email); with Instance, this run's gauges go to the
	// group {job, instance} instead, and the database-wide series stay in
	// {job}, pushed once whatever the number of hosts, so sum() over them
	// counts each total once.
	PushgatewayURL string
	Job            string
	Instance       string
}

// Export adds this run's counts to the running totals (when db is not
// nil; always, so a host that exports nothing still counts), then
// refreshes the series kind owns from the database and writes the textfile
// atomically (temp file + rename) and/or pushes to the Pushgateway.
func (m *Metrics) Export(ctx context.Context, db store.DBTX, opts ExportOptions, kind string) error {
	if m == nil {
		return nil
	}
	if db != nil {
		if err := m.Flush(ctx, db); err != nil {
			return err
		}
	}
	if opts.File == "" && opts.PushgatewayURL == "" {
		return nil
	}
	if db != nil {
		if err := m.refreshShared(ctx, db, kind); err != nil {
			return err
		}
	}
	var errs []error
	if opts.File != "" {
		if err := prometheus.WriteToTextfile(opts.File, prometheus.Gatherers{m.run, m.shared}); err != nil {
			errs = append(errs, fmt.Errorf("write metrics file %s: %w", opts.File, err))
		}
	}
	if opts.PushgatewayURL != "" {
		errs = append(errs, m.push(ctx, opts, kind))
	}
	return errors.Join(errs...)
}

// refreshShared reads the series kind owns from the database: its gauges
// and its running totals.
func (m *Metrics) refreshShared(ctx context.Context, db store.DBTX, kind string) error {
	if err := m.Refresh(ctx, db, kind); err != nil {
		return err
	}
	totals, err := loadTotals(ctx, db, kind)
	if err != nil {
		return err
	}
	return registerOnce(m.shared, totals)
}

// push sends the metrics to the Pushgateway of opts: everything to the
// job's group or, with an Instance, this run's gauges to {job, instance}
// and the database-wide series to {job}.
func (m *Metrics) push(ctx context.Context, opts ExportOptions, kind string) error {
	job := opts.Job
	if job == "" {
		job = "rindactl_" + kind
	}
	type group struct {
		instance string
		g        prometheus.Gatherer
	}
	pushes := []group{{"", prometheus.Gatherers{m.run, m.shared}}}
	if opts.Instance != "" {
		pushes = []group{{opts.Instance, m.run}}
		// An empty push would wipe the job's totals another host pushed.
		if fams, err := m.shared.Gather(); err != nil || len(fams) > 0 {
			pushes = append(pushes, group{"", m.shared})
		}
	}
	var errs []error
	for _, p := range pushes {
		if err := pushgateway(ctx, opts.PushgatewayURL, job, p.instance, p.g); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pushgateway pushes g to the Pushgateway at rawURL, to the group of job
// (and instance, when not empty). Credentials in the
// URL are sent properly: user:password@ as basic auth, the query (a
// proxy's ?token=) after the grouping path, not before it as the push
// library would put it. They are hidden from every log line and from the
// error, whatever the server echoes.
func pushgateway(ctx context.Context, rawURL, job, instance string, g prometheus.Gatherer) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("push metrics: invalid Pushgateway URL: %s", redact.String(err.Error()))
	}
	var secrets []string
	for _, vs := range u.Query() {
		secrets = append(secrets, vs...)
	}
	pusher := push.New((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(), job).Gatherer(g)
	if instance != "" {
		pusher = pusher.Grouping("instance", instance)
	}
	if u.User != nil {
		password, _ := u.User.Password()
		secrets = append(secrets, password)
		pusher = pusher.BasicAuth(u.User.Username(), password)
	}
	redact.Register(secrets...)
	if u.RawQuery != "" {
		pusher = pusher.Client(withQuery{query: u.RawQuery, next: http.DefaultClient})
	}
	if err := pusher.PushContext(ctx); err != nil {
		where := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
		return fmt.Errorf("push metrics to %s: %s", where, redact.String(err.Error(), secrets...))
	}
	return nil
}

// withQuery sends every request with the Pushgateway URL's query.
type withQuery struct {
	query string
	next  push.HTTPDoer
}

func (d withQuery) Do(r *http.Request) (*http.Response, error) {
	r.URL.RawQuery = d.query
	return d.next.Do(r)
}
