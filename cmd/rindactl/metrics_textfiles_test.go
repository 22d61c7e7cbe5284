package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Issue 27: with rindactl_email.prom, rindactl_enrich.prom and
// rindactl_inbox.prom in one node_exporter textfile directory, every scrape
// logged 13 "collected before with the same name and label values" errors
// (rindactl_workspace_spend_usd, rindactl_breakers_open, … written by every
// kind) and only one file's value survived. Every kind's ticks run twice
// with --metrics-file into one directory; Prometheus's own text parser
// loads the files together and a series in two files fails the test, as
// does a family whose TYPE or HELP differs between files, a _total that is
// not a counter, a counter not running across runs, and any complaint of
// promtool check metrics.
func TestMetricsTextfilesCoexist(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "pw1", "sdr02": "pw2"}})
	hook := newSlackHook(t)
	for _, env := range []map[string]string{a.env, a.tickEnv} {
		env["RINDA_SMTP_PASSWORD_SDR01"], env["RINDA_SMTP_PASSWORD_SDR02"] = "pw1", "pw2"
		env["RINDA_SLACK_WEBHOOK_URL"] = hook.URL + "/services/T000/B000/s3cret"
	}
	if res := runCLI(t, a.env, "import", "campaign", writeCampaign(t, srv, "")); res.code != exitOK {
		t.Fatalf("import campaign = %+v", res)
	}
	// Findymail out of quota: a breaker, an event to deliver, blocked calls.
	a.set.Findymail.SetMode(providertest.ModeQuota429)
	dir := t.TempDir()
	round := func(prefix string) {
		t.Helper()
		importAcceptanceLeads(t, a.env, "acme", prefix, 12)
		if _, err := a.db.Pool.Exec(context.Background(), `UPDATE lead_enrichment SET next_attempt_at = now() - interval '1 second' WHERE status = 'pending'`); err != nil {
			t.Fatal(err)
		}
		for _, kind := range tickkind.All {
			args := append(kind.Args(), "--metrics-file", filepath.Join(dir, "rindactl_"+string(kind)+".prom"))
			if res := runCLI(t, a.tickEnv, args...); res.code != exitOK {
				t.Fatalf("%v = %+v", args, res)
			}
			if kind == tickkind.Enrich {
				if res := runCLI(t, a.env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != exitOK {
					t.Fatalf("enroll = %+v", res)
				}
			}
		}
	}
	round("first")
	first := loadTextfiles(t, dir)
	round("second")
	files := loadTextfiles(t, dir)

	if len(files) != len(tickkind.All) {
		t.Fatalf("%d textfiles in %s, want one per kind", len(files), dir)
	}
	seen := map[string]string{}                // series -> file
	families := map[string]*dto.MetricFamily{} // name -> first seen
	for _, name := range slices.Sorted(maps.Keys(files)) {
		for fname, fam := range files[name] {
			if prev, ok := families[fname]; ok && (prev.GetType() != fam.GetType() || prev.GetHelp() != fam.GetHelp()) {
				t.Errorf("%s: family %s differs from another file's (type %s/%s, help %q/%q)", name, fname, prev.GetType(), fam.GetType(), prev.GetHelp(), fam.GetHelp())
			}
			families[fname] = fam
			if strings.HasSuffix(fname, "_total") != (fam.GetType() == dto.MetricType_COUNTER) {
				t.Errorf("%s: %s is a %s: a _total must be a counter and a counter a _total", name, fname, fam.GetType())
			}
			for _, m := range fam.GetMetric() {
				key := seriesKey(fname, m)
				if other, dup := seen[key]; dup {
					t.Errorf("%s is in %s and %s: node_exporter refuses the second", key, other, name)
				}
				seen[key] = name
			}
		}
	}
	// Per-run figures are gauges that say so; the totals run on.
	for _, want := range []string{"rindactl_tick_last_duration_seconds", "rindactl_tick_last_outcomes", "rindactl_tick_last_max_duration_seconds",
		"rindactl_leads_total", "rindactl_provider_requests_total", "rindactl_events_delivered_total", "rindactl_email_messages_total", "rindactl_email_overdue"} {
		if families[want] == nil {
			t.Errorf("no file carries %s", want)
		}
	}
	total := func(fams map[string]map[string]*dto.MetricFamily, file, family string) (sum float64) {
		for _, m := range fams[file][family].GetMetric() {
			sum += m.GetCounter().GetValue()
		}
		return sum
	}
	for _, c := range [][2]string{{"rindactl_enrich.prom", "rindactl_leads_total"}, {"rindactl_enrich.prom", "rindactl_provider_requests_total"}, {"rindactl_email.prom", "rindactl_email_messages_total"}} {
		if before, after := total(first, c[0], c[1]), total(files, c[0], c[1]); before <= 0 || after <= before {
			t.Errorf("%s: %v after one round, %v after two: want a running total", c[1], before, after)
		}
	}
	var finished int
	if err := a.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM lead_enrichment WHERE status <> 'pending'`).Scan(&finished); err != nil {
		t.Fatal(err)
	}
	if got := total(files, "rindactl_enrich.prom", "rindactl_leads_total") - find(files["rindactl_enrich.prom"]["rindactl_leads_total"], "outcome", "pending"); int(got) != finished {
		t.Errorf("rindactl_leads_total (not pending) = %v, want %d: the leads the ticks finished", got, finished)
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian: apt-get install prometheus); the textfiles were checked with the Go parser only")
	}
	for name := range files {
		cmd := exec.Command(promtool, "check", "metrics")
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin = strings.NewReader(string(data))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics %s: %v\n%s", name, err, out)
		}
	}
}

// loadTextfiles parses every .prom file of dir with Prometheus's parser.
func loadTextfiles(t *testing.T, dir string) map[string]map[string]*dto.MetricFamily {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.prom"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]*dto.MetricFamily{}
	for _, p := range paths {
		out[filepath.Base(p)] = readMetricsFile(t, p)
	}
	return out
}

func seriesKey(family string, m *dto.Metric) string {
	var labels []string
	for _, l := range m.GetLabel() {
		labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	slices.Sort(labels)
	return family + "{" + strings.Join(labels, ",") + "}"
}

// find is the counter value of the family's series whose label is value.
func find(fam *dto.MetricFamily, label, value string) float64 {
	for _, m := range fam.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
