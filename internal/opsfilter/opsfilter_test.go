package opsfilter_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/opsfilter"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	insert := func(sql string, args ...any) int64 {
		t.Helper()
		var id int64
		if err := db.Pool.QueryRow(ctx, sql+" RETURNING id", args...).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	alpha := insert(`INSERT INTO workspaces (name) VALUES ('alpha')`)
	beta := insert(`INSERT INTO workspaces (name) VALUES ('beta')`)
	const campaign = `INSERT INTO campaigns (workspace_id, name) VALUES ($1, $2)`
	launch := insert(campaign, alpha, "launch")
	shared := insert(campaign, alpha, "shared")
	insert(campaign, beta, "shared")

	ws, c, err := opsfilter.Resolve(ctx, db.Pool, "", "")
	if err != nil || ws != nil || c != nil {
		t.Errorf("no filter: ws=%v campaign=%v err=%v, want nil, nil, nil", ws, c, err)
	}
	ws, c, err = opsfilter.Resolve(ctx, db.Pool, "", "launch")
	if err != nil || ws != nil || c == nil || *c != launch {
		t.Errorf("launch: ws=%v campaign=%v err=%v, want campaign %d", ws, c, err, launch)
	}
	ws, c, err = opsfilter.Resolve(ctx, db.Pool, "alpha", "shared")
	if err != nil || ws == nil || *ws != alpha || c == nil || *c != shared {
		t.Errorf("alpha/shared: ws=%v campaign=%v err=%v, want %d/%d", ws, c, err, alpha, shared)
	}

	for _, tc := range []struct{ workspace, campaign, want string }{
		{"nope", "", `unknown workspace "nope" (see 'rindactl workspace list')`},
		{"", "nope", `unknown campaign "nope"`},
		{"beta", "launch", `unknown campaign "launch"`},
		{"", "shared", `campaign "shared" exists in 2 workspaces: add --workspace`},
	} {
		_, _, err := opsfilter.Resolve(ctx, db.Pool, tc.workspace, tc.campaign)
		var fe *opsfilter.Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%q, %q) = %v, want *opsfilter.Error %q", tc.workspace, tc.campaign, err, tc.want)
		}
	}
}
