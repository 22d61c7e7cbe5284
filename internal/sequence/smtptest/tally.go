package smtptest

import "sync"

// tally is the lock and the counts Server and Raw share; each server guards
// its other state with the same mu.
type tally struct {
	mu          sync.Mutex
	accepted    int
	connections int
}

// Accepted counts messages answered with 250 after the final dot (for
// Server, also those CountOnly counted).
func (t *tally) Accepted() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.accepted
}

// Connections counts the connections accepted so far.
func (t *tally) Connections() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.connections
}
