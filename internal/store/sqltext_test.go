package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sqlText matches what reads as a SQL statement in a Go string: the writes
// in any case (nothing but SQL says "update x set" or "insert into x"), the
// rest in upper case, as every statement of this module is written, so
// help text and error words ("select a campaign from ...") do not match.
var sqlText = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bUPDATE\s+[a-z_][\w.]*\s+(?:AS\s+\w+\s+|\w+\s+)?SET\b`),
	regexp.MustCompile(`(?i)\bINSERT\s+INTO\s+[a-z_][\w.]*`),
	regexp.MustCompile(`(?i)\bDELETE\s+FROM\s+[a-z_][\w.]*`),
	regexp.MustCompile(`\bSELECT\b[\s\S]*?\bFROM\s+[a-z_]\w*`),
	regexp.MustCompile(`\bSELECT\s+(?:count|pg_\w+|set_config|current_setting|nextval|now)\s*\(`),
	regexp.MustCompile(`\b(?:CREATE|ALTER|DROP)\s+(?:TABLE|INDEX|SCHEMA|ROLE|FUNCTION|TRIGGER|VIEW|EXTENSION|DATABASE)\b`),
	regexp.MustCompile(`\b(?:TRUNCATE|VACUUM|ANALYZE|LOCK\s+TABLE|GRANT|REVOKE)\s+[a-z_]`),
	regexp.MustCompile(`\bWITH\s+\w+\s+AS\s*(?:MATERIALIZED\s*)?\(`),
}

// sqlTextAllowed lists the Go files (or, ending in /, folders) still
// allowed to hold SQL text, each with why it is not a query file yet. It
// may only shrink: an entry leaves when its SQL moves to
// internal/store/queries, and the test fails on an entry that no longer
// holds SQL. Even here no statement may write a state column
// (stateColumns): such a writer must be a query file the map can read.
var sqlTextAllowed = map[string]string{
	// Bench and demo leave the shipped binary with their scratch schemas
	// (issue 41 item 4): DDL on a generated schema or database name,
	// which cannot be a bind parameter.
	"internal/bench/scratch.go": "bench scratch schema DDL",
	"internal/demo/database.go": "demo database CREATE/DROP DATABASE of a generated name",
	// A migration written in Go (it calls address.Canonical per row): it
	// runs once, at its version's schema, like sql/migrations, over table
	// names it is given; it writes addresses, no state column.
	"internal/store/migrate_canonical_addresses.go": "Go migration",
	// Planner settings (set_config) sent in the same batch ahead of a
	// statement; they read and write no table.
	"internal/store/plan.go": "planner settings",
	// Test kits and the cells simulation: never linked into rindactl's
	// ticks; their SQL probes and fixtures are the tests'.
	"internal/store/storetest/": "test kit",
	"scripts/":                  "development tools",
}

// sqlTextAllowedFor returns the entry of sqlTextAllowed that covers rel.
func sqlTextAllowedFor(rel string) (string, bool) {
	for k := range sqlTextAllowed {
		if k == rel || strings.HasSuffix(k, "/") && strings.HasPrefix(rel, k) {
			return k, true
		}
	}
	return "", false
}

// TestNoSQLOutsideQueryFiles keeps every statement the program runs in
// internal/store/queries (and the migrations), where the state-change map
// (TestStateChangeMapIsTrue) and the typing tests read them: an UPDATE of a
// state column written as a Go string would be a writer the map cannot see.
// Test files may hold SQL (fixtures and probes); generated sqlc code holds
// copies of the query files.
func TestNoSQLOutsideQueryFiles(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	var found []string
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// bench/ is its own module (the River peer), never linked into rindactl.
			if rel == "internal/store/sqlcdb" || rel == "internal/store/benchstore/benchdb" || rel == "bench" || strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, lit := range sqlLiterals(t, p, nil) {
			at := rel + ":" + strconv.Itoa(lit.line)
			if w := statementWrites(lit.text); len(w) > 0 {
				found = append(found, at+": writes state ("+strings.Join(tableNames(w), ", ")+") where the state-change map cannot see it")
				continue
			}
			if entry, ok := sqlTextAllowedFor(rel); ok {
				seen[entry] = true
				continue
			}
			found = append(found, at+": SQL text in Go "+strconv.Quote(shorten(lit.match))+"; move the statement to internal/store/queries/*.sql (sqlc) or queries/byhand")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Error(f)
	}
	for f := range sqlTextAllowed {
		if !seen[f] {
			t.Errorf("%s is on sqlTextAllowed but holds no SQL text any more: take it off the list", f)
		}
	}
}

// sqlLiteral is a string of Go source that reads as SQL.
type sqlLiteral struct {
	line        int
	text, match string
}

// sqlLiterals returns each string in the file that reads as SQL. A chain
// of + is read as one string (a non-literal operand as a word), so a
// statement split over literals is still seen.
func sqlLiterals(t *testing.T, path string, src any) []sqlLiteral {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var out []sqlLiteral
	ast.Inspect(f, func(n ast.Node) bool {
		var text string
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.ADD {
				return true
			}
			text = joined(n)
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return false
			}
			text, _ = strconv.Unquote(n.Value)
		default:
			return true
		}
		for _, re := range sqlText {
			if m := re.FindString(text); m != "" {
				out = append(out, sqlLiteral{line: fset.Position(n.Pos()).Line, text: text, match: m})
				return false
			}
		}
		return true
	})
	return out
}

// joined is a + chain's text: literals as they read, anything else " x ".
func joined(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return joined(e.X) + joined(e.Y)
		}
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, _ := strconv.Unquote(e.Value)
			return s
		}
	case *ast.ParenExpr:
		return joined(e.X)
	}
	return " x "
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// TestSQLTextSeen checks the scanner on the case: the state-change
// map's own statement as a Go string, whole or split over a + chain, is
// seen and read as a state write; help text is not SQL.
func TestSQLTextSeen(t *testing.T) {
	t.Parallel()
	src := `package requeue

const help = "select a campaign from the list, then update its settings"

func q(col string) string {
	_ = "UPDATE lead_enrichment SET status = 'pending' WHERE lead_id = $1"
	return "UPDATE lead_enrichment SET " + col + " = 'pending', status = 'pending'"
}
`
	lits := sqlLiterals(t, "requeue.go", src)
	if len(lits) != 2 {
		t.Fatalf("found %d SQL strings, want 2 (the two UPDATEs, not the help text): %+v", len(lits), lits)
	}
	for _, l := range lits {
		if w := statementWrites(l.text); !w["lead_enrichment"] {
			t.Errorf("line %d: %q not read as a write of lead_enrichment's state", l.line, l.text)
		}
	}
}
