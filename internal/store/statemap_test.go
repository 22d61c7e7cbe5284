package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// stateColumns are the columns that hold a lead's enrichment state and an
// enrollment step's state (docs/architecture.md, "Where state changes").
var stateColumns = map[string][]string{
	"lead_enrichment": {"status"},
	"enrollments":     {"status", "current_step", "next_send_at", "step_due_at"},
}

// stateWriter is one statement (a query file, a migration's statements, or
// a migration's trigger function) that writes a state column.
type stateWriter struct {
	key    string // path, or path#function for a trigger function
	tables map[string]bool
}

var (
	sqlComment  = regexp.MustCompile(`--[^\n]*`)
	writeStart  = regexp.MustCompile(`(?i)\b(UPDATE|INSERT\s+INTO)\s+(lead_enrichment|enrollments)\b`)
	setKeyword  = regexp.MustCompile(`(?i)\bSET\b`)
	triggerFunc = regexp.MustCompile(`(?is)CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(\w+)\s*\(\s*\)\s+RETURNS\s+trigger.*?\$\$(.*?)\$\$`)
	triggerOn   = regexp.MustCompile(`(?is)CREATE\s+TRIGGER\s+\w+\s+.*?\s+ON\s+(\w+)\s+.*?EXECUTE\s+(?:FUNCTION|PROCEDURE)\s+(\w+)`)
	newAssign   = regexp.MustCompile(`(?i)\bNEW\.(\w+)\s*:=`)
)

// setColumns returns the columns a SET list (from just after SET) assigns,
// reading to the end of the list: a top-level FROM, WHERE, RETURNING, ';'
// or the ')' that closes a CTE.
func setColumns(s string) []string {
	var cols []string
	depth, item := 0, strings.Builder{}
	flush := func() {
		f := strings.TrimSpace(item.String())
		if i := strings.Index(f, "="); i > 0 {
			col := strings.TrimSpace(f[:i])
			if j := strings.LastIndex(col, "."); j >= 0 {
				col = col[j+1:]
			}
			cols = append(cols, strings.ToLower(col))
		}
		item.Reset()
	}
	upper := strings.ToUpper(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				flush()
				return cols
			}
		case c == ';' && depth == 0:
			flush()
			return cols
		case c == ',' && depth == 0:
			flush()
			continue
		case depth == 0 && (i == 0 || !isWord(s[i-1])):
			for _, kw := range []string{"FROM", "WHERE", "RETURNING"} {
				if strings.HasPrefix(upper[i:], kw) && (i+len(kw) == len(s) || !isWord(s[i+len(kw)])) {
					flush()
					return cols
				}
			}
		}
		item.WriteByte(c)
	}
	flush()
	return cols
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// statementWrites reports the state tables sql writes: an INSERT creates a
// row in a state, an UPDATE counts when its SET list names a state column.
func statementWrites(sql string) map[string]bool {
	out := map[string]bool{}
	for _, m := range writeStart.FindAllStringSubmatchIndex(sql, -1) {
		verb, table := strings.ToUpper(sql[m[2]:m[3]]), sql[m[4]:m[5]]
		if !strings.HasPrefix(verb, "UPDATE") {
			out[table] = true
			continue
		}
		rest := sql[m[1]:]
		set := setKeyword.FindStringIndex(rest)
		if set == nil {
			continue
		}
		for _, col := range setColumns(rest[set[1]:]) {
			for _, c := range stateColumns[table] {
				if col == c {
					out[table] = true
				}
			}
		}
	}
	return out
}

// scanStateWriters finds every writer of a state column under
// internal/store/queries and sql/migrations (their Up parts).
func scanStateWriters(t *testing.T, root string) map[string]stateWriter {
	t.Helper()
	found := map[string]stateWriter{}
	add := func(key string, tables map[string]bool) {
		if len(tables) > 0 {
			found[key] = stateWriter{key: key, tables: tables}
		}
	}
	queries, err := filepath.Glob(filepath.Join(root, "internal/store/queries/*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	byhand, _ := filepath.Glob(filepath.Join(root, "internal/store/queries/byhand/*.sql"))
	// The demo's and the benchmarks' seeds (issue 41: their own package).
	benchOnly, _ := filepath.Glob(filepath.Join(root, "internal/store/benchstore/queries/*.sql"))
	for _, p := range append(append(queries, byhand...), benchOnly...) {
		rel, _ := filepath.Rel(root, p)
		add(filepath.ToSlash(rel), statementWrites(sqlComment.ReplaceAllString(readFile(t, p), "")))
	}
	migrations, _ := filepath.Glob(filepath.Join(root, "sql/migrations/*.sql"))
	for _, p := range migrations {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		text := readFile(t, p)
		if i := strings.Index(text, "-- +goose Down"); i >= 0 {
			text = text[:i]
		}
		on := map[string]string{} // function → table its trigger is on
		for _, m := range triggerOn.FindAllStringSubmatch(text, -1) {
			on[m[2]] = m[1]
		}
		funcs := triggerFunc.FindAllStringSubmatchIndex(text, -1)
		for _, m := range funcs {
			name, body := text[m[2]:m[3]], text[m[4]:m[5]]
			tables := statementWrites(sqlComment.ReplaceAllString(body, ""))
			if table := on[name]; stateColumns[table] != nil {
				for _, a := range newAssign.FindAllStringSubmatch(body, -1) {
					for _, c := range stateColumns[table] {
						if strings.EqualFold(a[1], c) {
							tables[table] = true
						}
					}
				}
			}
			add(rel+"#"+name, tables)
		}
		// The migration's own statements, its functions cut out.
		for i := len(funcs) - 1; i >= 0; i-- {
			text = text[:funcs[i][0]] + text[funcs[i][1]:]
		}
		add(rel, statementWrites(sqlComment.ReplaceAllString(text, "")))
	}
	return found
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docStateMap reads the rows of docs/architecture.md's "Where state
// changes" tables: the statement (first cell, in backticks) → the row.
func docStateMap(t *testing.T, root string) map[string]string {
	t.Helper()
	doc := readFile(t, filepath.Join(root, "docs/architecture.md"))
	start := strings.Index(doc, "\n## Where state changes")
	if start < 0 {
		t.Fatal(`docs/architecture.md has no "## Where state changes" section`)
	}
	section := doc[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	rows := map[string]string{}
	cell := regexp.MustCompile("^\\| `([^`]+)` \\|")
	for _, line := range strings.Split(section, "\n") {
		if m := cell.FindStringSubmatch(line); m != nil {
			rows[m[1]] = line
		}
	}
	return rows
}

// queryRunners maps a query (its sqlc name, or a hand-run query's file
// name) to the store functions that run it.
func queryRunners(t *testing.T, root string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(root, "internal/store/*.go"))
	benchFiles, _ := filepath.Glob(filepath.Join(root, "internal/store/benchstore/*.go"))
	files = append(files, benchFiles...)
	var parsed []*ast.File
	// A hand-run query is embedded in a variable (//go:embed
	// queries/byhand/<name>.sql), and one with parameters bound in
	// another (<name>Stmt = byName[...](<name>SQL)); a function that uses
	// either variable runs it.
	embedded := map[string]string{}
	bound := map[string]string{} // <name>Stmt -> <name>SQL
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				v, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				if call, ok := byNameCall(v); ok {
					if arg, ok := call.Args[0].(*ast.Ident); ok {
						bound[v.Names[0].Name] = arg.Name
					}
				}
				doc := v.Doc
				if doc == nil && len(g.Specs) == 1 {
					doc = g.Doc
				}
				if doc == nil {
					continue
				}
				for _, c := range doc.List {
					if path, ok := strings.CutPrefix(c.Text, "//go:embed "); ok {
						for _, n := range v.Names {
							embedded[n.Name] = strings.TrimSuffix(filepath.Base(strings.TrimSpace(path)), ".sql")
						}
					}
				}
			}
		}
	}
	for stmt, sql := range bound {
		if name, ok := embedded[sql]; ok {
			embedded[stmt] = name
		}
	}
	out := map[string][]string{}
	for _, f := range parsed {
		pkg := f.Name.Name // store, or benchstore
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				recv := fn.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			seen := map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.SelectorExpr:
					seen[x.Sel.Name] = true
				case *ast.Ident:
					if q, ok := embedded[x.Name]; ok {
						seen[q] = true
					}
				case *ast.BasicLit:
					if x.Kind == token.STRING {
						if s, err := strconv.Unquote(x.Value); err == nil {
							seen[s] = true
						}
					}
				}
				return true
			})
			for q := range seen {
				out[q] = append(out[q], pkg+"."+name)
			}
		}
	}
	return out
}

var sqlcName = regexp.MustCompile(`(?m)^-- name: (\w+)`)

// Issue 28: every statement that moves a lead or an enrollment step is
// listed in docs/architecture.md with the store functions that run it, and
// nothing else is: scanned from the query files and the migrations.
func TestStateChangeMapIsTrue(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	found := scanStateWriters(t, root)
	doc := docStateMap(t, root)
	runners := queryRunners(t, root)
	var keys []string
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row, ok := doc[k]
		if !ok {
			t.Errorf("docs/architecture.md, Where state changes: missing `%s` (it writes %v)", k, tableNames(found[k].tables))
			continue
		}
		for table := range found[k].tables {
			if !strings.Contains(row, table) {
				t.Errorf("docs/architecture.md: the row of `%s` does not say it writes %s", k, table)
			}
		}
		if strings.Contains(k, "#") || strings.HasPrefix(k, "sql/") {
			continue
		}
		// The store functions that run it.
		name := strings.TrimSuffix(filepath.Base(k), ".sql")
		if m := sqlcName.FindStringSubmatch(readFile(t, filepath.Join(root, k))); m != nil {
			name = m[1]
		}
		fns := runners[name]
		if len(fns) == 0 {
			t.Errorf("`%s`: no function in internal/store runs it (%s)", k, name)
		}
		for _, fn := range fns {
			if !strings.Contains(row, "`"+fn+"`") {
				t.Errorf("docs/architecture.md: the row of `%s` does not name `%s`, which runs it", k, fn)
			}
		}
	}
	for k := range doc {
		if _, ok := found[k]; !ok {
			t.Errorf("docs/architecture.md, Where state changes: stale `%s` (it writes no state column, or is gone)", k)
		}
	}
}

func tableNames(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
