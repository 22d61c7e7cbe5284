//go:build !rindafaults

package faults

// Built reports whether this is a rindafaults build.
const Built = false

// On reports whether fault f is switched on: never, outside a rindafaults
// build. Inlined to false, it removes the branch it guards.
func On(Fault) bool { return false }
