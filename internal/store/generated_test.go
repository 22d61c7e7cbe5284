package store_test

import (
	"os/exec"
	"testing"
)

// The typed queries in sqlcdb are generated from queries/*.sql and the
// migrations and committed, so building needs no sqlc; this fails when a
// query or migration changed without `sqlc generate`.
func TestGeneratedQueriesFresh(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sqlc"); err != nil {
		t.Skip("sqlc not on PATH, so the generated queries in internal/store/sqlcdb are not checked for staleness " +
			"(install: go install github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1)")
	}
	cmd := exec.Command("sqlc", "diff")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("internal/store/sqlcdb is stale (run `sqlc generate` in the repository root): %v\n%s", err, out)
	}
}
