package sequence

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/rindactl/rindactl/internal/store"
)

// BindingEpsilonDefault is how far above the mean a mailbox's load may go
// before a lead walks on to its next-ranked mailbox. 0.5% keeps the spread
// of 33,000 leads over 18 mailboxes at a coefficient of variation of at most
// 0.66% over random campaign and lead ids (1% let it reach 1.13%: issue 39,
// TestBindSendersBalanceOverRandomSeeds). Changing it moves no stored
// binding: it only decides new ones and rebinds of unsent first steps.
const BindingEpsilonDefault = 0.005

// bindingKey is what a mailbox is hashed by: its address, stable across
// re-imports unlike its database id, so bindings hash the same everywhere.
func bindingKey(mb store.MailboxLoad) string { return strings.ToLower(mb.Address) }

// BindSender picks the mailbox for a lead: rendezvous hashing (SHA-256 of
// campaign, lead and mailbox) with bounded loads. The lead walks its own
// ranking of the healthy mailboxes and takes the first whose load is below
// ⌈(1+ε)·(assigned+1)/m⌉. The result depends only on the arguments, so the
// caller stores it: leads already bound never move when others join, and
// removing a mailbox only rebinds that mailbox's leads. It returns the
// mailbox's id.
func BindSender(campaignID, leadID string, mailboxes []store.MailboxLoad, epsilon float64) (int64, bool) {
	healthy, assigned := 0, 0
	for _, mb := range mailboxes {
		if mb.Healthy {
			healthy++
			assigned += mb.Load
		}
	}
	if healthy == 0 {
		return 0, false
	}
	limit := int(math.Ceil((1 + epsilon) * float64(assigned+1) / float64(healthy)))
	// Some healthy mailbox is always under the limit: their loads sum to
	// assigned < limit·healthy.
	for _, mb := range rankMailboxes(campaignID, leadID, mailboxes) {
		if mb.Healthy && mb.Load < limit {
			return mb.ID, true
		}
	}
	return 0, false
}

// BindSenders binds leads in order, updating loads as it goes, and returns
// lead ID → mailbox id. Leads are bound in the order given: callers pass a
// stable order (by lead ID) so a rerun binds the same way.
func BindSenders(campaignID string, leadIDs []string, mailboxes []store.MailboxLoad, epsilon float64) map[string]int64 {
	loads := slices.Clone(mailboxes)
	index := make(map[int64]int, len(loads))
	for i, mb := range loads {
		index[mb.ID] = i
	}
	bound := make(map[string]int64, len(leadIDs))
	for _, lead := range leadIDs {
		id, ok := BindSender(campaignID, lead, loads, epsilon)
		if !ok {
			break
		}
		bound[lead] = id
		loads[index[id]].Load++
	}
	return bound
}

func rankMailboxes(campaignID, leadID string, mailboxes []store.MailboxLoad) []store.MailboxLoad {
	type scored struct {
		mb    store.MailboxLoad
		score uint64
	}
	ranked := make([]scored, len(mailboxes))
	for i, mb := range mailboxes {
		h := sha256.New()
		// NUL separators: ("ab","c") and ("a","bc") must not collide.
		h.Write([]byte(campaignID))
		h.Write([]byte{0})
		h.Write([]byte(leadID))
		h.Write([]byte{0})
		h.Write([]byte(bindingKey(mb)))
		ranked[i] = scored{mb: mb, score: binary.BigEndian.Uint64(h.Sum(nil))}
	}
	slices.SortFunc(ranked, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	out := make([]store.MailboxLoad, len(ranked))
	for i, s := range ranked {
		out[i] = s.mb
	}
	return out
}
