package status

import (
	"context"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// skippedShown is how many skipped inbox messages (and unmatched delivery
// reports) `why mailbox` lists.
const skippedShown = 10

// MailboxExplanation is `why mailbox`: what stops a mailbox sending, and
// how far its inbox has been read.
type MailboxExplanation struct {
	MailboxID   int64      `json:"mailbox_id"`
	Workspace   string     `json:"workspace"`
	Address     string     `json:"address"`
	Status      string     `json:"status"`
	PausedUntil *time.Time `json:"paused_until"`
	PauseReason string     `json:"pause_reason"`
	// The bounce-rate guard's view: hard bounces among its last sends that
	// reached a server (at most 200), and the limits its campaigns set.
	BounceRate      float64     `json:"bounce_rate"`
	Bounces         int64       `json:"bounces"`
	BounceSends     int64       `json:"bounce_sends"`
	BouncesInARow   int64       `json:"bounces_in_a_row"`
	BounceRateMax   float64     `json:"bounce_rate_max"`
	BounceStreakMax int         `json:"bounce_streak_max"`
	Inbox           *InboxState `json:"inbox"`
	Holds           []Hold      `json:"holds"`
	Summary         string      `json:"summary"`
}

// InboxState is where `inbox tick` left a mailbox's INBOX; nil in a
// MailboxExplanation when the mailbox has no imap_url.
type InboxState struct {
	UIDValidity uint32     `json:"uid_validity"`
	LastUID     uint32     `json:"last_uid"`
	CheckedAt   *time.Time `json:"checked_at"`
	LastError   string     `json:"last_error"`
	LockedBy    string     `json:"locked_by"`
	LockedUntil *time.Time `json:"locked_until"`
	// Skipped are the latest messages the tick could not process (UID and
	// reason); it moved past them.
	Skipped []store.InboxSkip `json:"skipped"`
	// Unmatched are the latest delivery reports that proved nothing of
	// ours (they ended nothing and count toward no bounce rate), of
	// UnmatchedTotal recorded.
	Unmatched      []store.InboxUnmatched `json:"unmatched"`
	UnmatchedTotal int64                  `json:"unmatched_total"`
}

// ExplainMailbox explains the mailbox with this address at now.
func ExplainMailbox(ctx context.Context, db store.DBTX, now time.Time, address, workspace string) (*MailboxExplanation, error) {
	m, err := sequence.FindMailbox(ctx, db, address, workspace)
	if err != nil {
		return nil, err
	}
	b, err := store.MailboxBounceStats(ctx, db, m.ID, store.BounceLimits{Window: sequence.BounceWindow, RateMax: sequence.BounceRateMaxDefault, StreakMax: sequence.BounceStreakMaxDefault})
	if err != nil {
		return nil, err
	}
	x := &MailboxExplanation{MailboxID: m.ID, Workspace: m.Workspace, Address: m.Address, Status: m.Status,
		PausedUntil: utc(m.PausedUntil), PauseReason: redact.String(m.PauseReason), Bounces: b.Bounces, BounceSends: b.Sends,
		BouncesInARow: b.Streak, BounceRateMax: b.RateMax, BounceStreakMax: b.StreakMax, Holds: []Hold{}}
	if b.Sends > 0 {
		x.BounceRate = float64(b.Bounces) / float64(b.Sends)
	}
	switch {
	case m.Status != "active":
		x.Holds = append(x.Holds, Hold{Code: "mailbox_disabled", Detail: fmt.Sprintf("the mailbox is %s: %s", m.Status, orNone(x.PauseReason))})
	case m.PausedUntil != nil && m.PausedUntil.After(now):
		x.Holds = append(x.Holds, Hold{Code: "mailbox_paused", Until: x.PausedUntil, Detail: fmt.Sprintf("paused until %s: %s", stamp(*m.PausedUntil), orNone(x.PauseReason))})
	}
	if m.ReadsInbox {
		if x.Inbox, err = inboxState(ctx, db, m, now); err != nil {
			return nil, err
		}
		x.Holds = append(x.Holds, inboxHolds(x.Inbox, now)...)
	}
	x.Summary = mailboxSummary(x)
	return x, nil
}

func inboxState(ctx context.Context, db store.DBTX, m store.OpsMailboxState, now time.Time) (*InboxState, error) {
	skipped, err := store.InboxSkipped(ctx, db, m.ID, skippedShown)
	if err != nil {
		return nil, err
	}
	for i := range skipped {
		skipped[i].Reason = redact.String(skipped[i].Reason)
		skipped[i].SkippedAt = skipped[i].SkippedAt.UTC()
	}
	unmatched, total, err := store.InboxUnmatchedRecent(ctx, db, m.ID, skippedShown)
	if err != nil {
		return nil, err
	}
	for i := range unmatched {
		unmatched[i].Reason = redact.String(unmatched[i].Reason)
		unmatched[i].RecordedAt = unmatched[i].RecordedAt.UTC()
	}
	return &InboxState{UIDValidity: m.UIDValidity, LastUID: m.LastUID, CheckedAt: utc(m.CheckedAt), LastError: redact.String(m.LastError),
		LockedBy: m.LockedBy, LockedUntil: utc(m.LockedUntil), Skipped: skipped, Unmatched: unmatched, UnmatchedTotal: total}, nil
}

// inboxHolds: what keeps the inbox from being read, and what was skipped.
func inboxHolds(in *InboxState, now time.Time) []Hold {
	var holds []Hold
	if in.LockedUntil != nil && in.LockedUntil.After(now) {
		holds = append(holds, leaseHold(in.LockedBy, in.LockedUntil, now, tickkind.Inbox))
	}
	if in.LastError != "" {
		holds = append(holds, Hold{Code: "inbox_error", Detail: "the last inbox tick could not read it: " + in.LastError})
	}
	for _, s := range in.Skipped {
		holds = append(holds, Hold{Code: "inbox_skipped", Detail: fmt.Sprintf("message UID %d (UIDVALIDITY %d) was skipped at %s: %s", s.UID, s.UIDValidity, stamp(s.SkippedAt), s.Reason)})
	}
	return holds
}

func mailboxSummary(x *MailboxExplanation) string {
	for _, h := range x.Holds {
		if h.Code == "mailbox_disabled" || h.Code == "mailbox_paused" {
			return "sends nothing: " + h.Detail
		}
	}
	s := fmt.Sprintf("sending; %d of its last %d sends hard-bounced", x.Bounces, x.BounceSends)
	if x.Inbox != nil && x.Inbox.LastError != "" {
		s += "; its inbox could not be read"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return s
}
