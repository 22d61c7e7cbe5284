package tick_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

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
