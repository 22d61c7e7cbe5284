package lead_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// ownFiles define the domain words; only they (and the SQL) spell them.
var ownFiles = map[string]bool{
	"internal/lead/status.go":       true,
	"internal/enrollment/status.go": true,
	"internal/tickkind/kind.go":     true,
}

// allowed are literals that spell a domain word but mean something else.
// Each entry: file (or a directory, ending in /), the literal, why it is not
// the status or kind.
var allowed = []struct{ file, literal, why string }{
	{"cmd/rindactl/migrate.go", "pending", "a migration's state in `migrate status`, not a lead's"},
	{"cmd/rindactl/events.go", "pending", "an event's delivery state in `events list`"},
	{"internal/enrich/tick.go", "enriched", "log key of the tick's outcome counts"},
	{"internal/enrich/tick.go", "not_found", "log key of the tick's outcome counts"},
	{"internal/enrich/tick.go", "pending", "log key of the tick's outcome counts"},
	{"internal/enrich/tick.go", "unreachable", "log key of the tick's outcome counts"},
	{"internal/enrich/tick.go", "enrichment_failed", "log key of the tick's outcome counts"},
	{"internal/enrich/guard.go", "not_found", "a provider call's outcome (provider_calls.outcome)"},
	{"cmd/rindactl/email.go", "email", "the command group's name"},
	{"cmd/rindactl/enrich.go", "enrich", "the command group's name"},
	{"cmd/rindactl/events.go", "events", "the command group's name and `events list`'s JSON key"},
	{"cmd/rindactl/inbox.go", "inbox", "the command group's name"},
	{"cmd/rindactl/schedule.go", "enrich", "a flag name (--enrich of schedule print and run)"},
	{"cmd/rindactl/schedule.go", "email", "a flag name (--email of schedule print and run)"},
	{"cmd/rindactl/schedule.go", "events", "a flag name (--events of schedule print and run)"},
	{"cmd/rindactl/schedule.go", "inbox", "a flag name (--inbox of schedule print and run)"},
	{"cmd/rindactl/schedule.go", "prune", "a flag name (--prune of schedule print and run)"},
	{"cmd/rindactl/prune.go", "prune", "the command's name"},
	{"internal/prune/rules.go", "events", "the events table, which prune walks"},
	{"internal/store/prune.go", "events", "the events table, which prune walks"},
	{"cmd/rindabench/bench_history.go", "events", "a flag name (--events of bench history)"},
	{"cmd/rindactl/bench.go", "email", "the name of rindabench's bench email, which rindactl bench hands off to"},
	{"internal/bench/history.go", "events", "the events table the history fills"},
	{"internal/store/benchstore/bench.go", "events", "the events table the history benchmark fills"},
	{"scripts/cells/", "events", "the events table a workspace move copies"},
	{"scripts/cells/", "enriched", "a column header of the simulation's report"},
	{"cmd/rindactl/enrollment.go", "replied", "a flag name (--replied)"},
	{"cmd/rindactl/enrollment.go", "unsubscribed", "a flag name (--unsubscribed)"},
	{"internal/store/leads_import.go", "email", "the lead's address column"},
	{"internal/enrich/leadcsv.go", "email", "the lead CSV's address column"},
	{"internal/enrich/enrichtest/leads.go", "email", "the lead CSV's address column"},
	{"internal/suppression/csv.go", "email", "the suppression CSV's address column"},
	{"cmd/rindactl/lead.go", "email", "a flag name (--email of lead forget)"},
	{"internal/enrich/provider/", "email", "the provider APIs' address field (adapters and stand-ins)"},
}

// TestNoDomainWordLiterals fails on a string literal in non-test Go code
// that spells a lead status, an enrollment status or a tick kind outside
// the type's own file: use the typed constant. "active", "failed" and
// "sent" are left out: campaigns, mailboxes, sends and metrics share them.
func TestNoDomainWordLiterals(t *testing.T) {
	words := map[string]bool{}
	for _, s := range lead.Statuses {
		words[string(s)] = true
	}
	for _, s := range enrollment.Statuses {
		words[string(s)] = true
	}
	words[string(enrollment.SendSending)] = true
	for _, k := range tickkind.All {
		words[string(k)] = true
	}
	delete(words, string(enrollment.Active))
	delete(words, string(enrollment.Failed))

	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if ownFiles[rel] {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil || !words[v] {
				return true
			}
			for _, a := range allowed {
				if (a.file == rel || strings.HasSuffix(a.file, "/") && strings.HasPrefix(rel, a.file)) && a.literal == v {
					used[a.file+" "+a.literal] = true
					return true
				}
			}
			found = append(found, fmt.Sprintf("%s:%d: %q: use the lead, enrollment or tickkind constant", rel, fset.Position(lit.Pos()).Line, v))
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
	for _, a := range allowed {
		if !used[a.file+" "+a.literal] {
			t.Errorf("allowlist entry %s %q matches nothing: remove it", a.file, a.literal)
		}
	}
}
