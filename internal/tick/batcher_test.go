package tick

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestBatcherGroupsBySizeAndKeepsEverything(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var groups [][]int
	b := NewBatcher(context.Background(), 10, time.Hour, func(_ context.Context, g []int) error {
		mu.Lock()
		defer mu.Unlock()
		groups = append(groups, append([]int(nil), g...))
		return nil
	})
	var wg sync.WaitGroup
	for w := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 21 {
				b.Add(w*100 + i)
			}
		}()
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for i, g := range groups {
		if len(g) > 10 {
			t.Errorf("group %d has %d items, want at most 10", i, len(g))
		}
		for _, v := range g {
			if seen[v] {
				t.Errorf("item %d flushed twice", v)
			}
			seen[v] = true
		}
	}
	if len(seen) != 105 {
		t.Fatalf("flushed %d distinct items, want 105", len(seen))
	}
	// 105 items with a 1 h timer: ten full groups and the rest at Close.
	if len(groups) != 11 {
		t.Errorf("got %d groups, want 11", len(groups))
	}
}

func TestBatcherFlushesOnTimer(t *testing.T) {
	t.Parallel()
	flushed := make(chan []string, 1)
	b := NewBatcher(context.Background(), 100, 5*time.Millisecond, func(_ context.Context, g []string) error {
		flushed <- append([]string(nil), g...)
		return nil
	})
	b.Add("a")
	select {
	case g := <-flushed:
		if len(g) != 1 || g[0] != "a" {
			t.Fatalf("flushed %v", g)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lone item was never flushed by the timer")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBatcherReportsFirstErrorAndSurvivesCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	boom := errors.New("boom")
	calls := 0
	b := NewBatcher(ctx, 1, time.Hour, func(fctx context.Context, g []int) error {
		calls++
		if fctx.Err() != nil {
			t.Errorf("flush context cancelled with the tick's context")
		}
		if calls == 1 {
			return boom
		}
		return nil
	})
	cancel()
	b.Add(1)
	b.Add(2)
	if err := b.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close() = %v, want the first flush error", err)
	}
	if calls != 2 {
		t.Fatalf("flush called %d times, want 2 (an error must not drop later groups)", calls)
	}
}
