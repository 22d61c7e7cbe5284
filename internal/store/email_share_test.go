package store_test

import (
	"fmt"
	"testing"

	"github.com/rindactl/rindactl/internal/store"
)

// shareTicks are n email tick ids, as tick.NewID makes them.
func shareTicks(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("web-1:%d:%08x", 1000+i, uint32(i)*2654435761)
	}
	return ids
}

// owners maps each slot to the index of the tick in ids whose share holds
// it; a slot held by none or by two fails t.
func owners(t *testing.T, ids []string) []int {
	t.Helper()
	own := make([]int, store.ShareSlots)
	for s := range own {
		own[s] = -1
	}
	for i, id := range ids {
		others := append(append([]string{}, ids[:i]...), ids[i+1:]...)
		mask := store.ShareMask(id, others)
		for s := range store.ShareSlots {
			if !store.InShare(mask, int64(s)) {
				continue
			}
			if own[s] >= 0 {
				t.Fatalf("%d ticks: slot %d is in the shares of %s and %s", len(ids), s, ids[own[s]], id)
			}
			own[s] = i
		}
	}
	for s, o := range own {
		if o < 0 {
			t.Fatalf("%d ticks: slot %d is in no share", len(ids), s)
		}
	}
	return own
}

// Every tick counting the same ticks computes the same partition: each
// slot in exactly one share, every slot in a lone tick's, and no share
// far from an even split (a tick with a small share serves the rest
// sooner, with connections to the others' mailboxes).
func TestShareMaskPartitionsTheSlots(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 16; n++ {
		own := owners(t, shareTicks(n))
		sizes := make([]int, n)
		for _, o := range own {
			sizes[o]++
		}
		even := store.ShareSlots / n
		for i, size := range sizes {
			if size < even*2/3 || size > even*3/2 {
				t.Errorf("%d ticks: tick %d holds %d slots, want within 2/3 and 3/2 of %d", n, i, size, even)
			}
		}
	}
}

// Issue 30: shares by id modulo the number of ticks moved nearly every
// mailbox to another tick whenever a tick started or ended, so at the
// start of 16 processes (each first claim seeing fewer ticks) a tick's
// first batches went to mailboxes that were another's a moment later,
// each a connection more. Now a tick that joins takes slots only, one
// that leaves gives its own only: the others' shares do not move.
func TestShareMaskMovesOnlyTheSlotsOfATickJoiningOrLeaving(t *testing.T) {
	t.Parallel()
	ids := shareTicks(16)
	for n := 1; n < len(ids); n++ {
		before, after := owners(t, ids[:n]), owners(t, ids[:n+1])
		for s := range before {
			if before[s] != after[s] && after[s] != n {
				t.Fatalf("tick %d joining %d others moved slot %d from tick %d to tick %d", n, n, s, before[s], after[s])
			}
		}
	}
	// Leaving: the 16 without the fourth tick, against the 16.
	all := owners(t, ids)
	rest := append(append([]string{}, ids[:3]...), ids[4:]...)
	less := owners(t, rest)
	for s := range all {
		was, is := ids[all[s]], rest[less[s]]
		if was != is && was != ids[3] {
			t.Fatalf("tick %s leaving moved slot %d from %s to %s", ids[3], s, was, is)
		}
	}
}
