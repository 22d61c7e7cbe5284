package store_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Every statement is typed. A hand-run one (queries/byhand/<name>.sql) is
// embedded into its own variable <name>SQL and names its parameters
// (@name, no $n). One with parameters is bound by name once, in
// <name>Stmt = byName[<name>Params](<name>SQL) (or <Name>Params), whose
// fields are tagged with the names (byName checks them when the package
// starts), every literal of the struct is keyed (the fields' order is
// no-one's business), and exactly one function runs <name>Stmt; one
// without runs <name>SQL from exactly one function. Nothing looks a
// statement up by name (no embed.FS in the store). The generated ones name
// every parameter (sqlc.arg), so no generated struct has Column1..N fields.
func TestByHandStatementsTyped(t *testing.T) {
	t.Parallel()
	files := storeSources(t)

	embeds := map[string]string{} // byhand file name -> variable
	structs := map[string]*ast.StructType{}
	bound := map[string]*ast.IndexExpr{} // variable -> its byName[P](...) call's byName[P]
	boundSQL := map[string]string{}      // variable -> the SQL variable it binds
	for path, f := range files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gen.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if st, ok := s.Type.(*ast.StructType); ok {
						structs[s.Name.Name] = st
					}
				case *ast.ValueSpec:
					if sel, ok := s.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "FS" {
						t.Errorf("%s: %s is an embed.FS: embed each hand-run statement into a string variable of its own", path, s.Names[0])
					}
					if call, ok := byNameCall(s); ok {
						bound[s.Names[0].Name] = call.Fun.(*ast.IndexExpr)
						if id, ok := call.Args[0].(*ast.Ident); ok {
							boundSQL[s.Names[0].Name] = id.Name
						}
					}
					doc := s.Doc
					if doc == nil && len(gen.Specs) == 1 {
						doc = gen.Doc
					}
					for _, c := range commentLines(doc) {
						pattern, ok := strings.CutPrefix(c, "//go:embed ")
						if !ok {
							continue
						}
						name, ok := strings.CutPrefix(pattern, "queries/byhand/")
						if !ok || strings.ContainsAny(name, "*?[ ") || !strings.HasSuffix(name, ".sql") || len(s.Names) != 1 {
							t.Errorf("%s: //go:embed %s: embed one queries/byhand file into one variable", path, pattern)
							continue
						}
						name = strings.TrimSuffix(name, ".sql")
						if want := camel(name) + "SQL"; s.Names[0].Name != want {
							t.Errorf("%s: queries/byhand/%s.sql is embedded into %s, want %s", path, name, s.Names[0].Name, want)
						}
						if prev, dup := embeds[name]; dup {
							t.Errorf("queries/byhand/%s.sql is embedded twice (%s, %s)", name, prev, s.Names[0].Name)
						}
						embeds[name] = s.Names[0].Name
					}
				}
			}
		}
	}

	onDisk, err := filepath.Glob(filepath.Join("queries", "byhand", "*.sql"))
	if err != nil || len(onDisk) == 0 {
		t.Fatalf("no hand-run queries: %v", err)
	}
	for _, p := range onDisk {
		name := strings.TrimSuffix(filepath.Base(p), ".sql")
		v, ok := embeds[name]
		if !ok {
			t.Errorf("%s is not embedded: give it a variable %sSQL and one function that runs it", p, camel(name))
			continue
		}
		sql, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := positional(string(sql)); n != "" {
			t.Errorf("%s uses %s: name each parameter (@name), bound to the field tagged with it", p, n)
		}
		_, names, err := pgx.NamedArgs{}.RewriteQuery(context.Background(), nil, string(sql), nil)
		if err != nil {
			t.Fatal(err)
		}
		stmt := camel(name) + "Stmt"
		call, hasStmt := bound[stmt]
		switch {
		case len(names) == 0 && hasStmt:
			t.Errorf("%s takes no parameters, but %s binds them", p, stmt)
		case len(names) > 0 && !hasStmt:
			t.Errorf("%s takes %d parameters: bind them by name, var %s = byName[%sParams](%s)", p, len(names), stmt, camel(name), v)
			continue
		case len(names) == 0:
			if callers := referrers(files, v); len(callers) != 1 {
				t.Errorf("%s (%s) is run by %d functions %v, want exactly one typed caller", p, v, len(callers), callers)
			}
			continue
		}
		// <name>Params, or <Name>Params where callers outside the store
		// fill it in.
		paramsType := camel(name) + "Params"
		if exported := strings.ToUpper(paramsType[:1]) + paramsType[1:]; types.ExprString(call.Index) == exported {
			paramsType = exported
		}
		if got := types.ExprString(call.Index); got != paramsType {
			t.Errorf("%s binds %s's parameters to %s, want %s", stmt, p, got, paramsType)
		}
		if _, ok := structs[paramsType]; !ok {
			t.Errorf("%s: no struct %s", p, paramsType)
		}
		if boundSQL[stmt] != v {
			t.Errorf("%s binds %s, want %s", stmt, boundSQL[stmt], v)
		}
		if callers := referrers(files, v); len(callers) != 0 {
			t.Errorf("%s runs %s without its binding: send %s.sql with %s.args(p)", strings.Join(callers, ", "), v, stmt, stmt)
		}
		callers := referrers(files, stmt)
		if len(callers) != 1 {
			t.Errorf("%s (%s) is run by %d functions %v, want exactly one typed caller", p, stmt, len(callers), callers)
			continue
		}
		if !slices.Contains(referrers(files, paramsType), callers[0]) {
			t.Errorf("%s runs %s without its %s", callers[0], stmt, paramsType)
		}
		for _, lit := range unkeyed(files, paramsType) {
			t.Errorf("%s: a %s literal without field names: name each field", lit, paramsType)
		}
	}
}

// byNameCall is s's initializer when it is byName[P](x).
func byNameCall(s *ast.ValueSpec) (*ast.CallExpr, bool) {
	if len(s.Names) != 1 || len(s.Values) != 1 {
		return nil, false
	}
	call, ok := s.Values[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, false
	}
	idx, ok := call.Fun.(*ast.IndexExpr)
	if !ok {
		return nil, false
	}
	fn, ok := idx.X.(*ast.Ident)
	return call, ok && fn.Name == "byName"
}

// unkeyed lists the files holding composite literals of type typ that
// leave out field names.
func unkeyed(files map[string]*ast.File, typ string) []string {
	var out []string
	for path, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || types.ExprString(lit.Type) != typ {
				return true
			}
			for _, e := range lit.Elts {
				if _, ok := e.(*ast.KeyValueExpr); !ok {
					out = append(out, path)
					break
				}
			}
			return true
		})
	}
	slices.Sort(out)
	return out
}

func TestGeneratedParametersNamed(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("sqlcdb", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated code in sqlcdb: %v", err)
	}
	// Column1, dollar_1: a $n sqlc could not name; Count_2: a second
	// unnamed column of the same kind.
	unnamed := regexp.MustCompile(`^(Column\d+|dollar_\d+|[A-Z]\w*_\d+)$`)
	fset := token.NewFileSet()
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && unnamed.MatchString(id.Name) {
				t.Errorf("%s: %s: name the parameter in the query with sqlc.arg(name) or sqlc.narg(name), or alias the column", fset.Position(id.Pos()), id.Name)
				return false
			}
			return true
		})
	}
}

// storeSources parses the store's non-test Go files.
func storeSources(t *testing.T) map[string]*ast.File {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = f
	}
	return out
}

func commentLines(g *ast.CommentGroup) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, c := range g.List {
		out = append(out, c.Text)
	}
	return out
}

// referrers names the functions (and methods) that use ident, in their
// signature or body.
func referrers(files map[string]*ast.File, ident string) []string {
	var out []string
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			found := false
			ast.Inspect(fn, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == ident {
					found = true
				}
				return !found
			})
			if found {
				out = append(out, fn.Name.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// positional is the first $n in sql outside -- comments, "" for none.
func positional(sql string) string {
	for _, line := range strings.Split(sql, "\n") {
		line, _, _ = strings.Cut(line, "--")
		if m := regexp.MustCompile(`\$\d+`).FindString(line); m != "" {
			return m
		}
	}
	return ""
}

// camel turns a file name (email_sends_begin) into a Go name
// (emailSendsBegin).
func camel(name string) string {
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// Plans are pinned one way, by a plan rule (plan.go): nothing else in the
// store picks an exec mode or sets a planner setting.
func TestPlansPinnedOneWay(t *testing.T) {
	t.Parallel()
	for path, f := range storeSources(t) {
		if path == "plan.go" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if strings.HasPrefix(n.Sel.Name, "QueryExecMode") {
					t.Errorf("%s: %s: pin a plan with a plan rule (plan.go), not an exec mode", path, n.Sel.Name)
				}
			case *ast.BasicLit:
				for _, setting := range []string{"enable_seqscan", "plan_cache_mode", "enable_hashjoin", "enable_nestloop"} {
					if strings.Contains(n.Value, setting) {
						t.Errorf("%s: sets %s: pin a plan with a plan rule (plan.go)", path, setting)
					}
				}
			}
			return true
		})
	}
}

// prepared is a hand-run statement as PREPARE takes it ($n for each @name)
// and the argument list EXECUTE then takes: literals, SQL text by name.
func prepared(t *testing.T, sql string, literals map[string]string) (text, args string) {
	t.Helper()
	named := pgx.StrictNamedArgs{}
	for k, v := range literals {
		named[k] = v
	}
	text, list, err := named.RewriteQuery(context.Background(), nil, sql, nil)
	if err != nil {
		t.Fatal(err)
	}
	parts := make([]string, len(list))
	for i, v := range list {
		parts[i] = v.(string)
	}
	return text, strings.Join(parts, ", ")
}
