package store

import "hash/fnv"

// shareSlots is how many slots the mailboxes fall into for the shares of
// concurrent email ticks: a mailbox's slot is its id modulo shareSlots.
const shareSlots = 1024

// shareMask is tick me's share of the mailboxes beside the other email
// ticks claiming now: bit s (get_bit order: byte s/8, bit s%8 from the
// least significant) is set when slot s is me's. Each slot goes to the
// tick whose hash with it is highest (rendezvous hashing), so every tick
// that counts the same ticks computes the same partition, and a tick
// joining or leaving moves only the slots it takes or gives up: the others
// keep theirs. Shares by id modulo the number of ticks moved nearly every
// mailbox whenever that number changed (each start and end of a tick), and
// each move costs a mailbox a connection from one more tick (issue 30).
// Alone, every slot is me's.
func shareMask(me string, others []string) []byte {
	mask := make([]byte, shareSlots/8)
	mine := tickHash(me)
	theirs := make([]uint64, len(others))
	for i, o := range others {
		theirs[i] = tickHash(o)
	}
	for s := range uint64(shareSlots) {
		if ownsSlot(me, mine, others, theirs, s) {
			mask[s/8] |= 1 << (s % 8)
		}
	}
	return mask
}

// ownsSlot says whether the tick me (hash mine) scores highest for slot s
// among others (hashes theirs); a tie (never seen: 64-bit scores) goes to
// the lower tick id.
func ownsSlot(me string, mine uint64, others []string, theirs []uint64, s uint64) bool {
	score := slotScore(mine, s)
	for i, h := range theirs {
		if o := slotScore(h, s); o > score || o == score && others[i] < me {
			return false
		}
	}
	return true
}

// tickHash is a tick id's FNV-1a hash: the same on every host.
func tickHash(tickID string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(tickID))
	return h.Sum64()
}

// slotScore mixes a tick's hash with a slot (splitmix64's finalizer).
func slotScore(tick, slot uint64) uint64 {
	z := tick + (slot+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
