package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
)

// Metrics is one process's Prometheus registry. A tick is a short process,
// so counters hold what this run did; gauges read from the database
// (breakers open, spend, last success) hold the shared state. Export
// writes them for node_exporter's textfile collector and/or pushes them.
// A nil *Metrics records nothing.
type Metrics struct {
	Registry *prometheus.Registry

	tickDuration     *prometheus.GaugeVec
	tickLastSuccess  *prometheus.GaugeVec
	leads            *prometheus.CounterVec
	providerRequests *prometheus.CounterVec
	guardBlocked     *prometheus.CounterVec
	breakersOpen     *prometheus.GaugeVec
	spend            *prometheus.GaugeVec
	eventsDelivered  *prometheus.CounterVec
	creditsLeft      *prometheus.GaugeVec

	// ownSuccess is this run's own last success per kind, which the
	// database may not show yet when Refresh reads it.
	mu         sync.Mutex
	ownSuccess map[string]time.Time
}

// NewMetrics registers every rindactl metric on a fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry:         prometheus.NewRegistry(),
		ownSuccess:       map[string]time.Time{},
		tickDuration:     newGaugeVec("rindactl_tick_duration_seconds", "Wall time of the last tick of this kind.", "kind"),
		tickLastSuccess:  newGaugeVec("rindactl_tick_last_success_timestamp_seconds", "Unix time a tick of this kind last finished successfully (any host).", "kind"),
		leads:            newCounterVec("rindactl_leads_total", "Leads processed by this run, by outcome.", "outcome"),
		providerRequests: newCounterVec("rindactl_provider_requests_total", "Provider calls made by this run, by provider and result class.", "provider", "class"),
		guardBlocked:     newCounterVec("rindactl_guard_blocked_total", "Provider calls the guards refused, by provider and reason.", "provider", "reason"),
		breakersOpen:     newGaugeVec("rindactl_breakers_open", "Breakers refusing calls, by provider.", "provider"),
		spend:            newGaugeVec("rindactl_workspace_spend_usd", "Provider spend this UTC month, by workspace.", "workspace"),
		eventsDelivered:  newCounterVec("rindactl_events_delivered_total", "Domain events posted to Slack by this run, by kind and result.", "kind", "result"),
		creditsLeft: newGaugeVec("rindactl_provider_credits_remaining",
			"Credits a provider account has left, as its account endpoint last reported them; key is host (the host's key) or the workspace with its own key.", "provider", "key"),
	}
	m.Registry.MustRegister(m.tickDuration, m.tickLastSuccess, m.leads, m.providerRequests,
		m.guardBlocked, m.breakersOpen, m.spend, m.eventsDelivered, m.creditsLeft)
	return m
}

// newGaugeVec and newCounterVec build one metric of NewMetrics.
func newGaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func newCounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// ObserveTick records a finished tick of kind ("enrich", "email", "events").
func (m *Metrics) ObserveTick(kind string, d time.Duration, ok bool, finished time.Time) {
	if m == nil {
		return
	}
	m.tickDuration.WithLabelValues(kind).Set(d.Seconds())
	if ok {
		m.mu.Lock()
		m.ownSuccess[kind] = finished
		m.mu.Unlock()
		m.tickLastSuccess.WithLabelValues(kind).Set(float64(finished.Unix()))
	}
}

// AddLeads counts n leads that ended with outcome.
func (m *Metrics) AddLeads(outcome string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.leads.WithLabelValues(outcome).Add(float64(n))
}

// ProviderRequest counts one settled provider call (the guard calls it).
func (m *Metrics) ProviderRequest(provider, class string) {
	if m == nil {
		return
	}
	m.providerRequests.WithLabelValues(provider, class).Inc()
}

// GuardBlocked counts one call the guards refused.
func (m *Metrics) GuardBlocked(provider, reason string) {
	if m == nil {
		return
	}
	m.guardBlocked.WithLabelValues(provider, reason).Inc()
}

// CreditsRemaining records what a provider account has left; key is
// "host" or the name of the workspace whose own key it is.
func (m *Metrics) CreditsRemaining(provider, key string, credits int64) {
	if m == nil {
		return
	}
	m.creditsLeft.WithLabelValues(provider, key).Set(float64(credits))
}

// EventDelivered counts one Slack post of an event, by result.
func (m *Metrics) EventDelivered(kind, result string) {
	if m == nil {
		return
	}
	m.eventsDelivered.WithLabelValues(kind, result).Inc()
}

// Refresh reads the shared state into gauges: open breakers, month spend,
// and the last successful tick of each kind in kinds.
func (m *Metrics) Refresh(ctx context.Context, db store.DBTX, kinds ...string) error {
	if m == nil {
		return nil
	}
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
	for _, k := range kinds {
		t, err := store.LastTickSuccess(ctx, db, k)
		if err != nil {
			return err
		}
		m.mu.Lock()
		own, ok := m.ownSuccess[k]
		m.mu.Unlock()
		if t != nil && t.After(own) {
			own, ok = *t, true
		}
		if ok {
			m.tickLastSuccess.WithLabelValues(k).Set(float64(own.Unix()))
		}
	}
	return nil
}

// ExportOptions says where Export sends the metrics; empty fields skip.
type ExportOptions struct {
	// File is the node_exporter textfile path (…/rindactl_enrich.prom).
	File string
	// PushgatewayURL is the Pushgateway base URL. A push replaces the
	// metrics of its group, job + instance: Job names the tick kind and
	// Instance the host (os.Hostname when empty), so ticks on several hosts
	// keep their own series instead of overwriting each other's.
	PushgatewayURL string
	Job            string
	Instance       string
}

// Export refreshes the database gauges (when db is not nil) and writes the
// textfile atomically (temp file + rename) and/or pushes to the
// Pushgateway. kinds are the tick kinds whose last success to read.
func (m *Metrics) Export(ctx context.Context, db store.DBTX, opts ExportOptions, kinds ...string) error {
	if m == nil || (opts.File == "" && opts.PushgatewayURL == "") {
		return nil
	}
	if db != nil {
		if err := m.Refresh(ctx, db, kinds...); err != nil {
			return err
		}
	}
	var errs []error
	if opts.File != "" {
		if err := prometheus.WriteToTextfile(opts.File, m.Registry); err != nil {
			errs = append(errs, fmt.Errorf("write metrics file %s: %w", opts.File, err))
		}
	}
	if opts.PushgatewayURL != "" {
		job := opts.Job
		if job == "" {
			job = "rindactl"
		}
		instance := opts.Instance
		if instance == "" {
			if instance, _ = os.Hostname(); instance == "" {
				instance = "unknown"
			}
		}
		if err := pushgateway(ctx, opts.PushgatewayURL, job, instance, m.Registry); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pushgateway pushes g to the Pushgateway at rawURL. Credentials in the
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
	pusher := push.New((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(), job).Grouping("instance", instance).Gatherer(g)
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
