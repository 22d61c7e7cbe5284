package tick

// Queued is how many requests wait in g for a statement.
func Queued[Q, R any](g *Group[Q, R]) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}
