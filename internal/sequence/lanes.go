package sequence

import (
	"context"
	"sync"
	"time"
)

// laneBook tracks the mailbox jobs of one tick so the claim loop never
// waits on a slow mailbox. Jobs are numbered by the claim (batch) that made
// them; each mailbox runs its jobs in order (its lane).
//
// The loop claims batch k+1 while the last mailboxes of batch k send, and
// claims again once batch k-1 is done — or earlier, when a mailbox has run dry while batch
// k-1 has been out for stragglerAfter and for stragglerFactor times as long
// as its first mailbox took: some server is far slower than the rest. A
// mailbox still busy with batch k-1 or older when batch k+1 is claimed is a
// straggler: the claim skips it, so a hung server holds its own rows and
// slot, not everyone's. (Without both bounds, ordinary unequal shares of a
// batch, or a loaded machine, would trigger a claim, each a few ms of
// Postgres CPU, every time one mailbox finishes first.) Nor while a job
// waits for a slot: then the tick is held by its own --concurrency, not by
// a slow server, and rows claimed now would only wait behind the others,
// and at the tick's end be released (issue 30: 16 processes on a loaded
// machine claimed 7.5 rows per message sent, each claim and each release a
// write to every index of the row).
type laneBook struct {
	mu      sync.Mutex
	changed chan struct{}   // closed and replaced when a job ends
	jobs    map[int64][]int // mailbox → its unfinished jobs' batch numbers, in order
	tails   map[int64]chan struct{}
	sent    map[int]time.Time     // batch number → when it was dispatched
	first   map[int]time.Duration // batch number → how long its first job took
	// ended counts finished jobs; dried counts jobs that left their
	// mailbox with nothing to do.
	ended, dried int
	// waiting counts the jobs ready to send but waiting for a slot.
	waiting int
}

func newLaneBook() *laneBook {
	return &laneBook{changed: make(chan struct{}), jobs: map[int64][]int{}, tails: map[int64]chan struct{}{},
		sent: map[int]time.Time{}, first: map[int]time.Duration{}}
}

// A batch is held up by stragglers once it has been out for stragglerAfter
// and for stragglerFactor times as long as its fastest mailbox took.
const (
	stragglerAfter  = time.Second
	stragglerFactor = 4
)

// start registers mailbox's job of batch seq; it returns the channel of the
// mailbox's previous job (nil when none) and the func to call when done.
func (b *laneBook) start(mailbox int64, seq int) (prev <-chan struct{}, done func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.sent[seq]; !ok {
		b.sent[seq] = time.Now()
	}
	if tail, ok := b.tails[mailbox]; ok {
		prev = tail
	}
	ch := make(chan struct{})
	b.tails[mailbox] = ch
	b.jobs[mailbox] = append(b.jobs[mailbox], seq)
	return prev, func() {
		b.mu.Lock()
		b.jobs[mailbox] = b.jobs[mailbox][1:]
		if _, ok := b.first[seq]; !ok {
			b.first[seq] = time.Since(b.sent[seq])
		}
		b.ended++
		if len(b.jobs[mailbox]) == 0 {
			b.dried++
		}
		close(b.changed)
		b.changed = make(chan struct{})
		b.mu.Unlock()
		// Only once the job is off the book may the next one start: one
		// that started earlier (and, stopping, ended at once) saw this job
		// still queued, left its outcomes pending for a job behind it that
		// did not exist, and a message sent stayed 'sending'.
		close(ch)
	}
}

// waitSlot records that a job starts (true) or stops (false) waiting for
// a slot; the last one to stop wakes waitReady.
func (b *laneBook) waitSlot(waiting bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if waiting {
		b.waiting++
		return
	}
	b.waiting--
	if b.waiting == 0 {
		close(b.changed)
		b.changed = make(chan struct{})
	}
}

// queued says whether the mailbox's running job has another behind it.
func (b *laneBook) queued(mailbox int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.jobs[mailbox]) > 1
}

// stragglers are the mailboxes still busy with a batch older than seq:
// the claim after batch seq gives them nothing.
func (b *laneBook) stragglers(seq int) []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []int64
	for mb, jobs := range b.jobs {
		if len(jobs) > 0 && jobs[0] < seq {
			out = append(out, mb)
		}
	}
	return out
}

// idle reports whether no job is running or waiting.
func (b *laneBook) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, jobs := range b.jobs {
		if len(jobs) > 0 {
			return false
		}
	}
	return true
}

// bookMark is the book's progress at a claim.
type bookMark struct{ ended, dried int }

func (b *laneBook) mark() bookMark {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bookMark{b.ended, b.dried}
}

// waitReady blocks until the loop should claim again after batch seq (the
// newest), claimed at mark; full says the claim filled its batch. It
// returns false when ctx ends or the deadline passes. claimReady decides.
func (b *laneBook) waitReady(ctx context.Context, deadline time.Time, seq int, at bookMark, full bool) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		b.mu.Lock()
		f := b.flight(seq)
		var straggleIn time.Duration
		if f.older {
			straggleIn = time.Until(b.sent[f.oldest].Add(max(stragglerAfter, stragglerFactor*b.first[f.oldest])))
		}
		ready, watch := claimReady(f, full, b.ended > at.ended, b.dried > at.dried, straggleIn)
		changed := b.changed
		b.mu.Unlock()
		if ready {
			return true
		}
		var straggling <-chan time.Time
		if watch {
			straggling = time.After(straggleIn)
		}
		select {
		case <-changed:
		case <-straggling:
		case <-ctx.Done():
			return false
		case <-timer.C:
			return false
		}
	}
}

// flight is what the book holds against the newest batch seq: any job,
// one of an older batch (the oldest such), one of seq itself.
type flight struct {
	any, older, current bool
	oldest              int
	// queued: some job waits for a slot.
	queued bool
}

// flight reads the jobs; b.mu is held.
func (b *laneBook) flight(seq int) flight {
	f := flight{oldest: seq, queued: b.waiting > 0}
	for _, jobs := range b.jobs {
		for _, j := range jobs {
			f.any = true
			f.older = f.older || j < seq
			f.current = f.current || j == seq
			f.oldest = min(f.oldest, j)
		}
	}
	return f
}

// claimReady is waitReady's decision at one moment. ended and dried say
// whether a job ended, or left its mailbox with nothing to do, since the
// claim; straggleIn is how long until the oldest batch counts as held up
// by stragglers. watch asks to decide again when straggleIn has passed.
//
// Nothing running: claim. After a full claim, once no job waits for a
// slot (the batch's last mailboxes have started: the next batch comes as
// they finish): when batch seq-1 is done (two batches in flight at most),
// or when a mailbox ran dry while an older batch has been out for
// stragglerAfter. After a short claim there
// is little left: when every job of batch seq is done and some job ended
// since the claim (rows released by a paused mailbox may be due again).
func claimReady(f flight, full, ended, dried bool, straggleIn time.Duration) (ready, watch bool) {
	switch {
	case !f.any:
		return true, false
	case !full:
		return !f.current && ended, false
	case f.queued:
		// Decided again when no job waits any more (waitSlot).
		return false, false
	case !f.older:
		return true, false
	case dried:
		return straggleIn <= 0, true
	}
	return false, false
}
