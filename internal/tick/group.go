package tick

import "sync"

// Group runs work for many goroutines as group commit does: a request that
// arrives while a statement for its group is in flight waits, and the next
// statement carries every request waiting by then (up to max). Each caller
// still gets its own answer and returns only once it is durable, so nothing
// changes for it but the number of statements: under load, many requests
// share one round trip, one plan and one commit; alone, a request runs at
// once, as it would without the group.
//
// One request leads each statement: the first to arrive at an idle group,
// then, when a statement ends with requests waiting, the oldest of them.
// A caller therefore runs at most the one statement that carries its own
// request.
type Group[Q, R any] struct {
	run func([]Q) ([]R, error)
	max int

	mu    sync.Mutex
	queue []*groupCall[Q, R]
	busy  bool
}

type groupCall[Q, R any] struct {
	q    Q
	r    R
	err  error
	done bool
	// wake tells a waiting caller that its answer is in, or that it leads
	// the next statement.
	wake chan struct{}
}

// NewGroup returns a group whose statements run run over at most max
// requests (max < 1: no bound). run must return one answer per request, in
// order, or an error that every request of that statement gets.
func NewGroup[Q, R any](max int, run func([]Q) ([]R, error)) *Group[Q, R] {
	return &Group[Q, R]{run: run, max: max}
}

// Do runs q in the next statement of the group and returns its answer.
func (g *Group[Q, R]) Do(q Q) (R, error) {
	c := &groupCall[Q, R]{q: q, wake: make(chan struct{}, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead {
		<-c.wake
		if c.done {
			return c.r, c.err
		}
	}
	// c leads: it is the oldest request waiting, so first in the batch.
	g.mu.Lock()
	n := len(g.queue)
	if g.max > 0 {
		n = min(n, g.max)
	}
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	qs := make([]Q, len(batch))
	for i, b := range batch {
		qs[i] = b.q
	}
	rs, err := g.run(qs)
	if err == nil && len(rs) != len(batch) {
		panic("tick.Group: run returned a different number of answers than requests")
	}
	for i, b := range batch {
		b.err = err
		if err == nil {
			b.r = rs[i]
		}
		b.done = true
		if b != c {
			b.wake <- struct{}{}
		}
	}
	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].wake <- struct{}{} // the oldest waiting leads the next one
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return c.r, c.err
}
