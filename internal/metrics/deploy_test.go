package metrics_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/metrics"
)

const deployDir = "../../deploy"

// exported is every metric name rindactl exports.
func exported() []string {
	names := metrics.RunGauges()
	for _, owned := range metrics.OwnedBy() {
		names = append(names, owned...)
	}
	return names
}

var metricName = regexp.MustCompile(`\brindactl_[a-z0-9_]+\b`)

// checkNames fails for a rindactl_ metric name in text that rindactl does
// not export: a rule or a panel on a name that was renamed never fires.
func checkNames(t *testing.T, where, text string) {
	t.Helper()
	known := exported()
	for _, name := range metricName.FindAllString(text, -1) {
		if !slices.Contains(known, name) {
			t.Errorf("%s uses %s, which rindactl does not export (known: %v)", where, name, known)
		}
	}
}

func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian: apt-get install prometheus); deploy/prometheus was not checked")
	}
	return path
}

// Issue 27: the alert rules shipped in deploy/prometheus load in
// Prometheus (promtool check rules), each alert has a unit test that passes
// (promtool test rules), and they only use metrics rindactl exports.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	rules := filepath.Join(deployDir, "prometheus", "rindactl-alerts.yml")
	data, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, rules, string(data))
	tests, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "rindactl-alerts.test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// Every alert has a test that expects it to fire.
	for _, m := range regexp.MustCompile(`(?m)^\s+- alert: (\S+)`).FindAllStringSubmatch(string(data), -1) {
		if !regexp.MustCompile(`alertname: ` + m[1] + `\n\s+exp_alerts:\n\s+- exp_labels`).Match(tests) {
			t.Errorf("alert %s has no unit test in rindactl-alerts.test.yml that expects it to fire", m[1])
		}
	}
	bin := promtool(t)
	for _, args := range [][]string{{"check", "rules", "rindactl-alerts.yml"}, {"test", "rules", "rindactl-alerts.test.yml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = filepath.Join(deployDir, "prometheus")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// dashboard is the part of Grafana's dashboard model the test checks.
type dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name, Type string
			Query      any `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Time struct{ From, To string } `json:"time"`
}

type panel struct {
	ID         int                         `json:"id"`
	Type       string                      `json:"type"`
	Title      string                      `json:"title"`
	GridPos    struct{ H, W, X, Y int }    `json:"gridPos"`
	Datasource *struct{ Type, UID string } `json:"datasource"`
	Targets    []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	FieldConfig *struct {
		Defaults  map[string]any `json:"defaults"`
		Overrides []any          `json:"overrides"`
	} `json:"fieldConfig"`
}

// Issue 27: the Grafana dashboard in deploy/grafana is a dashboard Grafana
// loads: its model's required fields, panels of known types on the 24
// column grid without overlap, every query on the dashboard's Prometheus
// data source, valid PromQL (promtool checks each as a recording rule), on
// metrics rindactl exports.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	path := filepath.Join(deployDir, "grafana", "rindactl-dashboard.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion < 36 || len(d.Panels) == 0 || d.Time.From == "" {
		t.Fatalf("dashboard model incomplete: title %q uid %q schemaVersion %d, %d panels, time %+v", d.Title, d.UID, d.SchemaVersion, len(d.Panels), d.Time)
	}
	if len(d.Templating.List) != 1 || d.Templating.List[0].Name != "datasource" || d.Templating.List[0].Type != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Errorf("templating %+v: want one Prometheus data source variable named datasource", d.Templating.List)
	}
	ids := map[int]bool{}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, p := range d.Panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID <= 0 || ids[p.ID] {
			t.Errorf("%s: id must be unique and positive", where)
		}
		ids[p.ID] = true
		if !slices.Contains([]string{"row", "timeseries", "stat", "table", "bargauge"}, p.Type) || p.Title == "" {
			t.Errorf("%s: type %q (want a core panel type) and a title", where, p.Type)
		}
		g := p.GridPos
		if g.H <= 0 || g.W <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			t.Errorf("%s: gridPos %+v is off the 24-column grid", where, g)
		}
		for _, q := range d.Panels[:i] {
			h := q.GridPos
			if g.X < h.X+h.W && h.X < g.X+g.W && g.Y < h.Y+h.H && h.Y < g.Y+g.H {
				t.Errorf("%s overlaps panel %d %q", where, q.ID, q.Title)
			}
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" || p.FieldConfig == nil || len(p.Targets) == 0 {
			t.Errorf("%s: want the ${datasource} Prometheus data source, a fieldConfig and targets", where)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] || tg.Expr == "" {
				t.Errorf("%s: target %+v needs a unique refId and an expr", where, tg)
			}
			refs[tg.RefID] = true
			checkNames(t, where, tg.Expr)
			fmt.Fprintf(&rules, "      - record: dashboard:panel_%d_%s\n        expr: %q\n", p.ID, tg.RefID, tg.Expr)
		}
	}
	bin := promtool(t)
	file := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("the dashboard's queries are not valid PromQL: %v\n%s", err, out)
	}
}
