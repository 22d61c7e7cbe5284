package tick_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

func TestRunRecordsStartAndFinishEvenAfterCancel(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	id := tick.NewID()
	run, err := tick.Start(ctx, db.Pool, tickkind.Enrich, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var finished *string
	if err := db.Pool.QueryRow(ctx, "SELECT finished_at::text FROM tick_runs WHERE tick_id = $1", id).Scan(&finished); err != nil {
		t.Fatal(err)
	}
	if finished != nil {
		t.Fatal("a running tick already has finished_at")
	}
	cancel() // as if SIGTERM arrived
	err = run.Finish(ctx, tick.Result{Claimed: 7, Counts: map[string]int{"enriched": 5, "pending": 2}, ExitStatus: 1, Err: errors.New("db went away")})
	if err != nil {
		t.Fatal(err)
	}
	var claimed, exit int
	var enriched int
	var msg string
	err = db.Pool.QueryRow(context.Background(),
		"SELECT claimed, exit_status, (counts->>'enriched')::int, error FROM tick_runs WHERE tick_id = $1 AND finished_at IS NOT NULL", id).
		Scan(&claimed, &exit, &enriched, &msg)
	if err != nil {
		t.Fatal(err)
	}
	if claimed != 7 || exit != 1 || enriched != 5 || msg != "db went away" {
		t.Fatalf("recorded claimed=%d exit=%d enriched=%d error=%q", claimed, exit, enriched, msg)
	}
}

func TestCleanStop(t *testing.T) {
	t.Parallel()
	other := errors.New("connection refused")
	for _, tc := range []struct {
		err, want error
	}{
		{nil, nil},
		{context.Canceled, nil},
		{fmt.Errorf("claiming events: %w", context.Canceled), nil},
		{context.DeadlineExceeded, context.DeadlineExceeded},
		{other, other},
	} {
		if got := tick.CleanStop(tc.err); got != tc.want {
			t.Errorf("CleanStop(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// tick.Run is every kind's lifecycle (issue 41): a stop by the context is
// clean unless the work left something unsettled, and the finish is
// recorded with the exit status either way.
func TestRunOwnsTheLifecycle(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	stopped := fmt.Errorf("claiming: %w", context.Canceled)
	for _, tc := range []struct {
		name     string
		out      tick.Outcome
		wantErr  bool
		wantExit int
	}{
		{"done", tick.Outcome{Claimed: 3, Counts: map[string]int{"sent": 3}}, false, 0},
		{"stopped between units of work", tick.Outcome{Claimed: 2, Err: stopped}, false, 0},
		{"stopped with rows unrecorded", tick.Outcome{Claimed: 2, Err: stopped, Unsettled: true}, true, 1},
		{"failed", tick.Outcome{Claimed: 1, Err: errors.New("connection refused")}, true, 1},
	} {
		id := tick.NewID()
		var sawStart bool
		ran, err := tick.Run(t.Context(), db.Pool, tick.Spec{Kind: tickkind.Email, ID: id}, func(ctx context.Context, started time.Time) tick.Outcome {
			sawStart = !started.IsZero()
			return tc.out
		})
		if !ran || !sawStart || (err != nil) != tc.wantErr {
			t.Errorf("%s: ran %v, started given %v, err %v; want an error %v", tc.name, ran, sawStart, err, tc.wantErr)
		}
		var claimed, exit int
		if err := db.Pool.QueryRow(t.Context(), "SELECT claimed, exit_status FROM tick_runs WHERE tick_id = $1 AND finished_at IS NOT NULL", id).Scan(&claimed, &exit); err != nil {
			t.Fatalf("%s: no finished row: %v", tc.name, err)
		}
		if claimed != tc.out.Claimed || exit != tc.wantExit {
			t.Errorf("%s: recorded claimed %d exit %d, want %d and %d", tc.name, claimed, exit, tc.out.Claimed, tc.wantExit)
		}
	}
	// Told to stop before its start: nothing runs, no error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran, err := tick.Run(ctx, db.Pool, tick.Spec{Kind: tickkind.Email, ID: tick.NewID()}, func(context.Context, time.Time) tick.Outcome {
		t.Error("work ran after a stop before the start")
		return tick.Outcome{}
	})
	if ran || err != nil {
		t.Errorf("stopped before the start: ran %v, err %v; want neither", ran, err)
	}
}

// Every kind goes through tick.Run: no package but this one starts or
// finishes a tick's row itself (issue 41: the lifecycle had been written
// five times and drifted).
func TestOnlyRunStartsTicks(t *testing.T) {
	t.Parallel()
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, filepath.Join("..", "tick")+string(filepath.Separator)) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, call := range []string{"tick.Start(", "tick.ErrStoppedBeforeStart", ".Finish(ctx, tick.Result"} {
			if strings.Contains(string(b), call) {
				found = append(found, path+": "+call)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: run the tick through tick.Run", f)
	}
}
