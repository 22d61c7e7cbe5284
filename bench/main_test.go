package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/bench"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func TestPairsPrintsTheMedianOfPerPairRatios(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	in := "80 100\n\n36 40\n56.0 80\n"
	if code := run(context.Background(), []string{"pairs"}, strings.NewReader(in), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var s bench.PairSummary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if s.Pairs != 3 || s.Median != 0.8 || s.Min != 0.7 || s.Max != 0.9 {
		t.Fatalf("summary %+v: want 3 pairs, median 0.8, min 0.7, max 0.9", s)
	}
}

func TestPairsRejectsBadInputWithExit2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"80 100\n36\n", "line 2"},
		{"80 abc\n", "line 1"},
		{"", "no pairs"},
		{"1 0\n", "pair 1"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"pairs"}, strings.NewReader(tc.in), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) || out.Len() != 0 {
			t.Errorf("input %q: exit %d, stderr %q, stdout %q; want exit 2 naming %q and no output", tc.in, code, errb.String(), out.String(), tc.want)
		}
	}
}

func TestRiverUsageErrors(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://127.0.0.1:1/none")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"river"}, "--jobs is required"},
		{[]string{"river", "--jobs", "10", "--workers", "0"}, "invalid --workers 0"},
		{[]string{"river", "--jobs", "10", "--fetch-cooldown", "0s"}, "--fetch-cooldown"},
		{[]string{"nope"}, `unknown command "nope"`},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

func TestRiverWorksEveryJobInItsOwnSchemaAndDropsIt(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	res, err := runRiver(ctx, riverConfig{URL: db.URL, Jobs: 7000, Workers: 4,
		FetchCooldown: defaultFetchCooldown, FetchPollInterval: defaultFetchPollInterval})
	if err != nil {
		t.Fatal(err)
	}
	if res.Jobs != 7000 || res.Workers != 4 || res.Seconds <= 0 || res.RowsPerSec <= 0 || res.CPUPerRowUS <= 0 {
		t.Fatalf("result %+v: want 7000 jobs by 4 workers with a positive time, rate and CPU", res)
	}
	var left int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rindactl_river_%'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d River scratch schemas left behind", left)
	}
	var tables int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename LIKE 'river%'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Fatalf("River left %d tables outside its scratch schema", tables)
	}
}
