package inbox

import (
	"cmp"
	"slices"

	"github.com/emersion/go-imap/v2"
)

// readPlan is which of the UIDs above a mailbox's checkpoint one session
// reads, at most a batch:
//
//   - backlog: the oldest UIDs above the checkpoint, oldest first. The
//     checkpoint moves only through these, and only past the ones the
//     server actually returned: a UID left out stops it, and is passed
//     over (recorded as skipped) only when left out by two sessions.
//   - ahead: when the backlog is longer than a batch, the newest UIDs,
//     newest first and read before the backlog, taking half the batch.
//     A reply arriving behind thousands of junk messages is read by the
//     next tick; the checkpoint does not move for them, and the backlog
//     reads them again when it gets there (acting on a message twice
//     changes nothing), so nothing is ever skipped.
type readPlan struct {
	ahead, backlog []uint32
}

// planRead picks the UIDs above last from a search's ranges, never
// expanding a range further than the batch (a range may span 2^32 UIDs)
// and never looping on a uint32 (a range may end at 4294967295).
func planRead(ranges []imap.UIDRange, last uint32, batch int) readPlan {
	rs := uidRanges(ranges, last)
	var total uint64
	for _, r := range rs {
		total += r[1] - r[0] + 1
	}
	if batch <= 0 || len(rs) == 0 {
		return readPlan{}
	}
	if total <= uint64(batch) {
		return readPlan{backlog: lowest(rs, batch)}
	}
	aheadN := batch / 2
	p := readPlan{backlog: lowest(rs, batch-aheadN)}
	top := p.backlog[len(p.backlog)-1]
	for _, u := range highest(rs, aheadN) {
		if u > top {
			p.ahead = append(p.ahead, u)
		}
	}
	return p
}

// uidRanges are a search's ranges above last, as closed uint64 intervals
// (so no loop over them wraps).
func uidRanges(ranges []imap.UIDRange, last uint32) [][2]uint64 {
	rs := make([][2]uint64, 0, len(ranges))
	for _, r := range ranges {
		lo, hi := uint64(r.Start), uint64(r.Stop)
		if lo == 0 || hi == 0 {
			continue // "*" in a search answer: a server's bug
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		lo = max(lo, uint64(last)+1)
		if lo <= hi {
			rs = append(rs, [2]uint64{lo, hi})
		}
	}
	return rs
}

// maxUID is the largest UID of the ranges (0 for none).
func maxUID(rs [][2]uint64) uint32 {
	var m uint64
	for _, r := range rs {
		m = max(m, r[1])
	}
	return uint32(m)
}

// lowest lists the n smallest UIDs of the ranges, ascending, once each.
func lowest(rs [][2]uint64, n int) []uint32 {
	slices.SortFunc(rs, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	out := make([]uint32, 0, n)
	var next uint64
	for _, r := range rs {
		for u := max(r[0], next); u <= r[1] && len(out) < n; u++ {
			out = append(out, uint32(u))
			next = u + 1
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// highest lists the n largest UIDs of the ranges, descending, once each.
func highest(rs [][2]uint64, n int) []uint32 {
	slices.SortFunc(rs, func(a, b [2]uint64) int { return cmp.Compare(b[1], a[1]) })
	out := make([]uint32, 0, n)
	below := uint64(1) << 33
	for _, r := range rs {
		for u := min(r[1], below-1); u >= r[0] && len(out) < n; u-- {
			out = append(out, uint32(u))
			below = u
		}
		if len(out) == n {
			break
		}
	}
	return out
}
