package store_test

import (
	"go/ast"
	"testing"
)

// maxPositional is the most positional parameters an exported store
// function takes, ctx and the database handle included: beyond it, two
// same-typed arguments swapped at a call site compile and write each
// other's values (issue 41: BreakerTrip took 9). More go in a struct whose
// fields the caller names.
const maxPositional = 5

func TestExportedFunctionsTakeFewPositionalParameters(t *testing.T) {
	t.Parallel()
	for path, f := range storeSources(t) {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			n := 0
			for _, p := range fn.Type.Params.List {
				n += max(len(p.Names), 1)
			}
			if n > maxPositional {
				t.Errorf("%s: %s takes %d positional parameters, more than %d: pass the rest in a struct", path, fn.Name.Name, n, maxPositional)
			}
		}
	}
}
