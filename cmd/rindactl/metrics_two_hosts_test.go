package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Issue 38 (5): with the textfile method on two hosts, each host exported
// the same database-wide running totals and the shipped dashboard's panels
// summed them over the hosts (58.1 shown for a true 33.8). Two hosts run
// every tick kind against one database, each into its own textfile
// directory, over three rounds of work; each round ends with both hosts'
// idle firings, which rewrite their files with the totals as they now are.
// The files of both hosts, scraped a minute apart as node_exporter's
// instance "host-a"/"host-b" would be, and the database's own running
// totals, as one series each, go to promtool; every dashboard panel on a
// database-wide counter must show over the two hosts exactly what the same
// query shows over the database's counts, at every minute.
func TestDashboardTwoHostTextfiles(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian: apt-get install prometheus); the dashboard was not evaluated over two hosts")
	}
	a := newAcceptance(t)
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "pw1", "sdr02": "pw2"}})
	hook := newSlackHook(t)
	for _, env := range []map[string]string{a.env, a.tickEnv} {
		env["RINDA_SMTP_PASSWORD_SDR01"], env["RINDA_SMTP_PASSWORD_SDR02"] = "pw1", "pw2"
		env["RINDA_SLACK_WEBHOOK_URL"] = hook.URL + "/services/T000/B000/s3cret"
		// No half-open probe on a loaded machine: an idle firing counts
		// nothing, so both hosts' files end each round equal.
		env["RINDA_BREAKER_QUOTA_OPEN"] = "1h"
	}
	if res := runCLI(t, a.env, "import", "campaign", writeCampaign(t, srv, "")); res.code != exitOK {
		t.Fatalf("import campaign = %+v", res)
	}
	hosts := []string{"host-a", "host-b"}
	dirs := map[string]string{}
	for _, h := range hosts {
		dirs[h] = t.TempDir()
	}
	snaps := twoHostRounds(t, a, dirs, hosts)

	// The scenario is what it claims: each host's file holds the
	// database's totals, and they grew where the panels look.
	checkTwoHostSnapshots(t, snaps, hosts)
	last := snaps[len(snaps)-1]
	var finished int
	if err := a.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM lead_enrichment WHERE status <> 'pending'`).Scan(&finished); err != nil {
		t.Fatal(err)
	}
	if got := sumFamily(last.db, "rindactl_leads_total") - last.db[`rindactl_leads_total{outcome="pending"}`]; int(got) != finished {
		t.Errorf("rindactl_leads_total (not pending) = %v in the database's totals, %d leads finished", got, finished)
	}
	if got := last.db[fmt.Sprintf(`rindactl_email_messages_total{mailbox="sdr01@acme.test",outcome=%q,workspace="acme"}`, store.MetricSent)] +
		last.db[fmt.Sprintf(`rindactl_email_messages_total{mailbox="sdr02@acme.test",outcome=%q,workspace="acme"}`, store.MetricSent)]; int(got) != srv.Received() {
		t.Errorf("rindactl_email_messages_total{outcome=sent} = %v in the database's totals, the SMTP server received %d", got, srv.Received())
	}
	if t.Failed() {
		t.FailNow()
	}

	panels := dashboardCounterPanels(t)
	for _, id := range []int{6, 7, 11, 12, 13, 22} {
		if _, ok := panels[id]; !ok {
			t.Errorf("panel %d is not a query on a database-wide counter any more", id)
		}
	}
	file := filepath.Join(t.TempDir(), "two-hosts.test.yml")
	if err := os.WriteFile(file, twoHostPromtoolTest(snaps, hosts, panels), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "test", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("the dashboard's panels over two hosts differ from the database's counts (got: the difference): %v\n%s", err, out)
	}
}

// twoHostRounds runs four rounds of work on hosts against one database,
// each host's ticks writing into its own textfile directory, and scrapes
// both hosts and the database after each.
func twoHostRounds(t *testing.T, a acceptance, dirs map[string]string, hosts []string) []twoHostSnapshot {
	t.Helper()
	tick := func(host string, kind tickkind.Kind) {
		t.Helper()
		args := append(kind.Args(), "--metrics-file", filepath.Join(dirs[host], "rindactl_"+string(kind)+".prom"))
		if res := runCLI(t, a.tickEnv, args...); res.code != exitOK {
			t.Errorf("%s: %v = %+v", host, args, res)
		}
	}
	var snaps []twoHostSnapshot
	for round := range 4 {
		// Providers out of quota after the first scrape: breakers, events
		// to deliver, blocked calls; each counter grows between two scrapes.
		switch round {
		case 1:
			a.set.Findymail.SetMode(providertest.ModeQuota429)
		case 3:
			a.set.Hunter.SetMode(providertest.ModeQuota429)
		}
		importAcceptanceLeads(t, a.env, "acme", fmt.Sprintf("r%d", round), 12)
		if _, err := a.db.Pool.Exec(context.Background(), `UPDATE lead_enrichment SET next_attempt_at = now() - interval '1 second' WHERE status = 'pending'`); err != nil {
			t.Fatal(err)
		}
		// Both hosts fire every kind at once and share the work.
		for _, kind := range tickkind.All {
			var wg sync.WaitGroup
			for _, h := range hosts {
				wg.Go(func() { tick(h, kind) })
			}
			wg.Wait()
			if kind == tickkind.Enrich {
				if res := runCLI(t, a.env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != exitOK {
					t.Fatalf("enroll = %+v", res)
				}
			}
		}
		// The next, idle firings on each host.
		for _, h := range hosts {
			for _, kind := range tickkind.All {
				tick(h, kind)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		snaps = append(snaps, takeTwoHostSnapshot(t, a.db.Pool, dirs))
	}
	return snaps
}

// checkTwoHostSnapshots fails unless every host exports, at every
// scrape, exactly the database's totals, and each counter grows between
// two scrapes.
func checkTwoHostSnapshots(t *testing.T, snaps []twoHostSnapshot, hosts []string) {
	t.Helper()
	for i, s := range snaps {
		for _, h := range hosts {
			for key, v := range s.db {
				if got, ok := s.hosts[h][key]; !ok || got != v {
					t.Errorf("scrape %d: %s exports %s = %v (%v), the database has %v", i, h, key, got, ok, v)
				}
			}
			for key := range s.hosts[h] {
				if _, ok := s.db[key]; !ok {
					t.Errorf("scrape %d: %s exports %s, which the database has not", i, h, key)
				}
			}
		}
	}
	for _, name := range twoHostCounters() {
		if !grows(snaps, name) {
			t.Errorf("no series of %s grew between two scrapes: the scenario shows nothing on its panels", name)
		}
	}
}

// twoHostSnapshot is one scrape: each host's database-wide counter
// series, and the database's running totals at that moment, by series.
type twoHostSnapshot struct {
	hosts map[string]map[string]float64
	db    map[string]float64
}

// twoHostCounters are the database-wide counters (running totals).
func twoHostCounters() []string {
	var out []string
	for _, names := range metrics.OwnedBy() {
		for _, n := range names {
			if strings.HasSuffix(n, "_total") {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

func takeTwoHostSnapshot(t *testing.T, db store.DBTX, dirs map[string]string) twoHostSnapshot {
	t.Helper()
	counters := twoHostCounters()
	s := twoHostSnapshot{hosts: map[string]map[string]float64{}, db: map[string]float64{}}
	for h, dir := range dirs {
		s.hosts[h] = map[string]float64{}
		for _, fams := range loadTextfiles(t, dir) {
			for name, fam := range fams {
				if !slices.Contains(counters, name) {
					continue
				}
				for _, m := range fam.GetMetric() {
					s.hosts[h][seriesKey(name, m)] = m.GetCounter().GetValue()
				}
			}
		}
	}
	ctx := context.Background()
	totals, err := store.MetricTotals(ctx, db, counters)
	if err != nil {
		t.Fatal(err)
	}
	for _, tot := range totals {
		s.db[labelledKey(tot.Metric, tot.Labels)] = float64(tot.Value)
	}
	mbs, err := store.EmailMetricsMailboxes(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, mb := range mbs {
		for outcome, n := range map[string]int64{store.MetricSent: mb.Sent, store.MetricFailed: mb.Failed, store.MetricDeferred: mb.Deferred, store.MetricDeliveryUnknown: mb.DeliveryUnknown} {
			s.db[labelledKey("rindactl_email_messages_total", map[string]string{"workspace": mb.Workspace, "mailbox": mb.Address, "outcome": outcome})] = float64(n)
		}
	}
	// A series a host exports at 0 before anything was counted (the
	// exporter's zeros) is the database's 0.
	for _, series := range s.hosts {
		for k, v := range series {
			if _, ok := s.db[k]; !ok && v == 0 {
				s.db[k] = 0
			}
		}
	}
	return s
}

// labelledKey writes a series as seriesKey does.
func labelledKey(name string, labels map[string]string) string {
	var ls []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		ls = append(ls, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return name + "{" + strings.Join(ls, ",") + "}"
}

// grows reports whether a series of the counter name is in two
// consecutive snapshots and grew between them: rate() sees a series grow
// from its second scrape on.
func grows(snaps []twoHostSnapshot, name string) bool {
	for i := 1; i < len(snaps); i++ {
		for k, v := range snaps[i].db {
			if before, ok := snaps[i-1].db[k]; ok && strings.HasPrefix(k, name+"{") && v > before {
				return true
			}
		}
	}
	return false
}

func sumFamily(series map[string]float64, name string) (sum float64) {
	for k, v := range series {
		if strings.HasPrefix(k, name+"{") {
			sum += v
		}
	}
	return sum
}

var metricNameRE = regexp.MustCompile(`\brindactl_[a-z0-9_]+\b`)

// dashboardCounterPanels reads the shipped dashboard: the queries of each
// panel on a database-wide counter, by panel id.
func dashboardCounterPanels(t *testing.T) map[int][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "rindactl-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			ID      int `json:"id"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	counters := twoHostCounters()
	out := map[int][]string{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, name := range metricNameRE.FindAllString(tg.Expr, -1) {
				if slices.Contains(counters, name) {
					out[p.ID] = append(out[p.ID], tg.Expr)
					break
				}
			}
		}
	}
	return out
}

// twoHostMinutes is how many one-minute scrapes see each snapshot.
const twoHostMinutes = 3

// twoHostPromtoolTest writes a promtool unit test: the hosts' series
// labelled as node_exporter targets, the database's totals as db:<name>
// (one series each, as a single exporter would give), and for every
// panel query Q and minute the check that Q over the hosts equals Q over
// db:, within float rounding, label set by label set (a series one side
// has and the other lacks counts unless it is 0).
func twoHostPromtoolTest(snaps []twoHostSnapshot, hosts []string, panels map[int][]string) []byte {
	var b strings.Builder
	b.WriteString("rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n")
	values := func(pick func(twoHostSnapshot) (float64, bool)) string {
		var vs []string
		for _, s := range snaps {
			v, ok := pick(s)
			for range twoHostMinutes {
				if ok {
					vs = append(vs, fmt.Sprint(v))
				} else {
					vs = append(vs, "_")
				}
			}
		}
		return strings.Join(vs, " ")
	}
	keys := map[string]bool{}
	for _, s := range snaps {
		for _, h := range hosts {
			for k := range s.hosts[h] {
				keys[k] = true
			}
		}
		for k := range s.db {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		name, labels, _ := strings.Cut(strings.TrimSuffix(k, "}"), "{")
		sep := ""
		if labels != "" {
			sep = ","
		}
		for _, h := range hosts {
			fmt.Fprintf(&b, "      - series: %q\n        values: %q\n", fmt.Sprintf(`%s{instance="%s:9100",job="node"%s%s}`, name, h, sep, labels),
				values(func(s twoHostSnapshot) (float64, bool) { v, ok := s.hosts[h][k]; return v, ok }))
		}
		fmt.Fprintf(&b, "      - series: %q\n        values: %q\n", "db:"+k,
			values(func(s twoHostSnapshot) (float64, bool) { v, ok := s.db[k]; return v, ok }))
	}
	b.WriteString("    promql_expr_test:\n")
	end := len(snaps) * twoHostMinutes
	for _, id := range slices.Sorted(maps.Keys(panels)) {
		for _, q := range panels[id] {
			truth := metricNameRE.ReplaceAllString(q, "db:$0")
			check := fmt.Sprintf("abs((%s) - (%s)) > 1e-9 or ((%s) != 0 unless (%s)) or ((%s) != 0 unless (%s))", q, truth, q, truth, truth, q)
			for minute := 1; minute < end; minute++ {
				fmt.Fprintf(&b, "      - expr: %q\n        eval_time: %dm\n        exp_samples: []\n", check, minute)
			}
			// Not vacuous: the query shows something over the run.
			fmt.Fprintf(&b, "      - expr: %q\n        eval_time: %dm\n        exp_samples:\n          - labels: '{}'\n            value: 1\n",
				fmt.Sprintf("count(max_over_time((%s)[%dm:1m]) > 0) > bool 0", truth, end), end-1)
		}
	}
	return []byte(b.String())
}
