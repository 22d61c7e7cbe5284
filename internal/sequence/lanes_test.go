package sequence

import (
	"testing"
	"time"
)

// A mailbox's next job may start only once the job before it is off the
// book: it then sees no job queued behind it unless one is. The book let
// the next job start first, so a job that ended at once (a stopping tick
// releases its rows) still saw its predecessor queued, kept its mailbox's
// outcomes for a job that never came, and a message the server accepted
// stayed 'sending' (bench width at 16 processes under load: 1 to 2 a run).
func TestLaneNextJobStartsOnlyOnceThePreviousIsOffTheBook(t *testing.T) {
	t.Parallel()
	book := newLaneBook()
	_, doneFirst := book.start(7, 1)
	prev, doneSecond := book.start(7, 2)

	// Hold the book while the first job ends: the second must not be let
	// start before the first is off it.
	book.mu.Lock()
	go doneFirst()
	select {
	case <-prev:
		first := len(book.jobs[7]) == 2
		book.mu.Unlock()
		if first {
			t.Fatal("the second job was let start while the first was still on the book")
		}
	case <-time.After(time.Second):
		// Waiting for the book, as it must: nothing was let start.
		book.mu.Unlock()
	}
	<-prev
	if book.queued(7) {
		t.Error("the second job, the mailbox's last, sees a job queued behind it")
	}
	doneSecond()
	if !book.idle() {
		t.Error("both jobs ended, the book is not idle")
	}
}
