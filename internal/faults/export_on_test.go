//go:build rindafaults

package faults

// enabledForTest replaces the switches on, returning the previous set.
func enabledForTest(on map[Fault]bool) map[Fault]bool {
	prev := enabled
	enabled = on
	return prev
}
