package tick

import (
	"context"
	"sync"
	"time"
)

// Defaults for grouping outcomes: the database sees one commit per group,
// not per row, and a crash loses at most one group (whose leases bring the
// rows back).
const (
	BatchSizeDefault  = 100
	BatchEveryDefault = 20 * time.Millisecond
	flushTimeout      = 10 * time.Second
)

// Batcher collects items from many goroutines and hands them to flush in
// groups: when size items are waiting or every has passed since the first
// one arrived. flush runs on one goroutine at a time, in arrival order.
type Batcher[T any] struct {
	size  int
	every time.Duration
	flush func(context.Context, []T) error
	ctx   context.Context

	in   chan T
	done chan struct{}

	mu  sync.Mutex
	err error
}

// NewBatcher starts a batcher. Flushes use a context that survives ctx's
// cancellation (a SIGTERM'd tick still records what it finished), bounded
// by a timeout.
func NewBatcher[T any](ctx context.Context, size int, every time.Duration, flush func(context.Context, []T) error) *Batcher[T] {
	if size <= 0 {
		size = BatchSizeDefault
	}
	if every <= 0 {
		every = BatchEveryDefault
	}
	b := &Batcher[T]{
		size: size, every: every, flush: flush,
		ctx:  context.WithoutCancel(ctx),
		in:   make(chan T, size),
		done: make(chan struct{}),
	}
	go b.loop()
	return b
}

// Add queues one item. It blocks only while a full group is being flushed.
func (b *Batcher[T]) Add(item T) { b.in <- item }

// Close flushes what is left and returns the first flush error.
func (b *Batcher[T]) Close() error {
	close(b.in)
	<-b.done
	return b.Err()
}

// Err returns the first flush error so far; a tick stops claiming once its
// outcomes cannot be recorded.
func (b *Batcher[T]) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *Batcher[T]) loop() {
	defer close(b.done)
	group := make([]T, 0, b.size)
	timer := time.NewTimer(b.every)
	timer.Stop()
	send := func() {
		if len(group) == 0 {
			return
		}
		timer.Stop()
		ctx, cancel := context.WithTimeout(b.ctx, flushTimeout)
		err := b.flush(ctx, group)
		cancel()
		if err != nil {
			b.mu.Lock()
			if b.err == nil {
				b.err = err
			}
			b.mu.Unlock()
		}
		group = make([]T, 0, b.size)
	}
	for {
		select {
		case item, ok := <-b.in:
			if !ok {
				send()
				return
			}
			if len(group) == 0 {
				timer.Reset(b.every)
			}
			group = append(group, item)
			if len(group) >= b.size {
				send()
			}
		case <-timer.C:
			send()
		}
	}
}
