package enrich

import (
	"context"
	"sync"
	"time"
)

// pairKey names a (workspace, provider) pair: quotas, breakers and slow
// start are per workspace, since workspaces may carry their own plans.
type pairKey struct {
	workspaceID int64
	provider    string
}

// pair is what one tick has learned about a (workspace, provider) pair. It
// complements the shared guard: the guard's breaker opens only after the
// first quota answer comes back, and with 25 calls in flight 24 more would
// already be on their way. Slow start sends one call alone until the pair has
// answered once; after a quota answer the tick sends it nothing more.
type pair struct {
	// slot is the single in-flight call allowed before the first answer.
	slot chan struct{}
	// proven is closed by the first clean answer: full concurrency from then.
	proven     chan struct{}
	provenOnce sync.Once

	mu sync.Mutex
	// quota is the quota answer this pair gave in this tick, if any.
	quota *ProviderError
	// blockedBy caches a guard's refusal until it ends, so leads queued
	// behind a known block do not ask again.
	blockedBy step
}

func newPair() *pair {
	return &pair{slot: make(chan struct{}, 1), proven: make(chan struct{})}
}

// enter waits for permission to call: at once when the pair has answered
// before, else for the single slow-start slot. It returns the function that
// gives the slot back, or false when ctx ended first.
func (p *pair) enter(ctx context.Context) (leave func(), ok bool) {
	select {
	case <-p.proven:
		return func() {}, true
	default:
	}
	select {
	case <-p.proven:
		return func() {}, true
	case p.slot <- struct{}{}:
		return func() { <-p.slot }, true
	case <-ctx.Done():
		return nil, false
	}
}

// answered records a clean answer: from now on calls fan out.
func (p *pair) answered() { p.provenOnce.Do(func() { close(p.proven) }) }

func (p *pair) setQuota(pe *ProviderError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quota == nil {
		p.quota = pe
	}
}

// exhausted returns the quota answer this pair gave in this tick.
func (p *pair) exhausted() *ProviderError {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.quota
}

// block remembers a guard's refusal s, keeping the one that ends last.
func (p *pair) block(s step) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.until.After(p.blockedBy.until) {
		p.blockedBy = s
	}
}

// blocked returns a cached guard refusal that still holds at now.
func (p *pair) blocked(now time.Time) (step, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Before(p.blockedBy.until) {
		return p.blockedBy, true
	}
	return step{}, false
}

// pairs hands out one pair per key for the tick's lifetime.
type pairs struct {
	mu sync.Mutex
	m  map[pairKey]*pair
}

func (ps *pairs) get(k pairKey) *pair {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[pairKey]*pair{}
	}
	p, ok := ps.m[k]
	if !ok {
		p = newPair()
		ps.m[k] = p
	}
	return p
}
