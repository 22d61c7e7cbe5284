//go:build !rindafaults

package faults

// enabledForTest has nothing to replace outside a rindafaults build.
func enabledForTest(map[Fault]bool) map[Fault]bool { return nil }
