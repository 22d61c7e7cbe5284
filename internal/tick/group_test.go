package tick_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/rindactl/rindactl/internal/tick"
)

// Requests that arrive while a statement is in flight share the next one;
// each gets its own answer, and a statement's error reaches only its own
// requests.
func TestGroupSharesStatementsAndKeepsAnswersApart(t *testing.T) {
	t.Parallel()
	inFlight := make(chan struct{})
	proceed := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	g := tick.NewGroup(3, func(qs []int) ([]int, error) {
		mu.Lock()
		sizes = append(sizes, len(qs))
		first := len(sizes) == 1
		mu.Unlock()
		if first {
			close(inFlight)
			<-proceed
		}
		if qs[0] < 0 {
			return nil, errors.New("refused")
		}
		out := make([]int, len(qs))
		for i, q := range qs {
			out[i] = q * 10
		}
		return out, nil
	})

	lead := make(chan int, 1)
	go func() {
		r, _ := g.Do(1)
		lead <- r
	}()
	<-inFlight
	// Seven more while the first statement runs: at most 3 per statement.
	var wg sync.WaitGroup
	answers := make([]int, 8)
	errs := make([]error, 8)
	for i := 2; i <= 7; i++ {
		wg.Go(func() { answers[i], errs[i] = g.Do(i) })
	}
	// Wait until all six are queued (one of them may lead the next one).
	for {
		mu.Lock()
		n := len(sizes)
		mu.Unlock()
		if n == 1 && tick.Queued(g) == 6 {
			break
		}
		runtime.Gosched()
	}
	close(proceed)
	wg.Wait()
	if r := <-lead; r != 10 {
		t.Errorf("first request answered %d, want 10", r)
	}
	for i := 2; i <= 7; i++ {
		if errs[i] != nil || answers[i] != i*10 {
			t.Errorf("request %d answered %d, %v; want %d", i, answers[i], errs[i], i*10)
		}
	}
	if len(sizes) != 3 || sizes[1] != 3 || sizes[2] != 3 {
		t.Errorf("statements of %v requests, want [1 3 3]", sizes)
	}

	if _, err := g.Do(-1); err == nil {
		t.Error("a failed statement answered without its error")
	}
	if r, err := g.Do(4); err != nil || r != 40 {
		t.Errorf("after a failed statement: %d, %v; want 40", r, err)
	}
}
