package inbox

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
)

// A delivery report counts only for what it proves (issue 37). Anyone can
// write "Final-Recipient: rfc822; someone-we-mailed@x" in a report, so an
// address alone proves nothing. A send of ours is proven when the report
// was returned to that send's VERP return path (whose MAC only we can
// make), or when the report names the send's Message-ID (its returned
// original, an Original-Message-ID field, its In-Reply-To or References)
// and fails the very recipient that send went to. Both are looked up
// among the sends of the mailbox whose INBOX holds the report. Each
// recipient a report names is proven on its own; what no proof covers
// ends nothing, suppresses nothing and counts toward no bounce rate: it
// is recorded as unmatched (`inbox tick`, `rindactl why mailbox`).

// provenSend is a send a report proved it answers, and whether the
// failure it reports for it is permanent.
type provenSend struct {
	send store.InboxSend
	hard bool
}

// proof is what a report proves: the sends, and how many of its failed
// recipients no proof covers.
type proof struct {
	sends    []provenSend
	unproven int
}

// prove finds the sends of mb a report proves it answers.
func (t *inboxTick) prove(ctx context.Context, tx pgx.Tx, mb mailbox, f Finding) (proof, error) {
	var verpIDs []string
	for _, a := range f.EnvelopeTo {
		if id, ok := sequence.VERPMessageID(mb.address, a, mb.verpSecret); ok {
			verpIDs = append(verpIDs, id)
		}
	}
	verp, err := store.InboxSendsByMessageID(ctx, tx, mb.id, verpIDs)
	if err != nil {
		return proof{}, err
	}
	named, err := store.InboxSendsByMessageID(ctx, tx, mb.id, f.MessageIDs)
	if err != nil {
		return proof{}, err
	}
	covered := make([]bool, len(f.Failed))
	seen := map[int64]bool{}
	var p proof
	for _, s := range verp {
		// The return path was made for this one send: every failure the
		// report gives is that send's, an alias it was forwarded to
		// included.
		if !seen[s.SendID] {
			seen[s.SendID] = true
			p.sends = append(p.sends, provenSend{send: s, hard: f.Hard})
		}
		for i := range covered {
			covered[i] = true
		}
	}
	for _, s := range named {
		if seen[s.SendID] {
			continue
		}
		// The Message-ID is ours; the recipient it fails must be the one
		// that message went to.
		if i := failedIndex(f.Failed, s.Email); i >= 0 {
			seen[s.SendID] = true
			p.sends = append(p.sends, provenSend{send: s, hard: f.Failed[i].Hard})
			covered[i] = true
		}
	}
	for _, c := range covered {
		if !c {
			p.unproven++
		}
	}
	return p, nil
}

// failedIndex is the first failed recipient block naming email (canonical,
// as leads store it), or -1.
func failedIndex(failed []FailedRecipient, email string) int {
	if email == "" {
		return -1
	}
	for i, r := range failed {
		if r.Final != "" && address.Key(r.Final) == email || r.Original != "" && address.Key(r.Original) == email {
			return i
		}
	}
	return -1
}

// bounce ends the sequences of the sends a delivery report proves it
// answers, as bounced; a permanent failure also suppresses that send's
// address and records it for the bounce-rate guard. A report that proves
// nothing is recorded as unmatched (and, naming more than a handful of
// addresses the mailbox never mailed, raises inbox_suspicious).
func (t *inboxTick) bounce(ctx context.Context, tx pgx.Tx, mb mailbox, cp *store.InboxCheckpoint, uid uint32, f Finding, counts map[string]int, unmatched *[]SkippedMessage) (bool, error) {
	p, err := t.prove(ctx, tx, mb, f)
	if err != nil {
		return false, err
	}
	from := eventSender(f.From)
	if len(p.sends) == 0 {
		return false, t.unproven(ctx, tx, mb, cp, uid, f, counts, unmatched)
	}
	if p.unproven > 0 {
		counts[OutcomeUnmatched]++
		reason := fmt.Sprintf("a delivery report from %s also names %d address(es) it proves nothing about (no Message-ID we sent to them); they were left alone", from, p.unproven)
		if err := t.recordUnmatched(ctx, tx, mb, cp, uid, reason, unmatched); err != nil {
			return false, err
		}
	}
	var hard, soft []store.InboxSend
	var hardIDs []int64
	for _, s := range p.sends {
		if s.hard {
			hard, hardIDs = append(hard, s.send), append(hardIDs, s.send.SendID)
		} else {
			soft = append(soft, s.send)
		}
	}
	if err := store.MarkSendsBounced(ctx, tx, hardIDs); err != nil {
		return false, err
	}
	for _, g := range []struct {
		sends    []store.InboxSend
		suppress string
	}{{hard, string(enrollment.Bounced)}, {soft, ""}} {
		if len(g.sends) == 0 {
			continue
		}
		if err := mark(ctx, tx, g.sends, enrollment.Bounced, g.suppress, OutcomeBounced, counts); err != nil {
			return false, err
		}
	}
	return len(hard) > 0, nil
}

// unproven records a report that proved nothing: unmatched, or
// suspicious (with its inbox_suspicious event) when it names more than
// suspiciousRecipientsMax addresses the mailbox never mailed.
func (t *inboxTick) unproven(ctx context.Context, tx pgx.Tx, mb mailbox, cp *store.InboxCheckpoint, uid uint32, f Finding, counts map[string]int, unmatched *[]SkippedMessage) error {
	since := t.opts.Now().Add(-bounceRecipientWindow)
	mailed, err := store.InboxSendsToRecipients(ctx, tx, mb.id, f.Recipients, since)
	if err != nil {
		return err
	}
	reason := fmt.Sprintf("a delivery report from %s naming %d address(es), %d of them mailed by %s in the last %s, proves none of them ours "+
		"(no VERP return path of ours, no Message-ID we sent to an address it names); it ended and suppressed nothing",
		eventSender(f.From), len(f.Recipients), len(mailed), mb.address, days(bounceRecipientWindow))
	if never := len(f.Recipients) - len(mailed); never > suspiciousRecipientsMax {
		counts[OutcomeSuspicious]++
		if err := t.suspicious(ctx, tx, mb, cp, uid, f, never); err != nil {
			return err
		}
	} else {
		counts[OutcomeUnmatched]++
	}
	return t.recordUnmatched(ctx, tx, mb, cp, uid, reason, unmatched)
}

func days(d time.Duration) string { return fmt.Sprintf("%d days", int(d.Hours()/24)) }

// recordUnmatched keeps an unmatched report for `why mailbox` and the
// tick's report.
func (t *inboxTick) recordUnmatched(ctx context.Context, tx pgx.Tx, mb mailbox, cp *store.InboxCheckpoint, uid uint32, reason string, unmatched *[]SkippedMessage) error {
	reason = clip(cleanText(reason), skipReasonMax)
	if err := store.RecordInboxUnmatched(ctx, tx, mb.id, store.InboxUnmatched{UIDValidity: cp.UIDValidity, UID: uid, Reason: reason, TickID: t.opts.TickID}); err != nil {
		return err
	}
	*unmatched = append(*unmatched, SkippedMessage{Mailbox: mb.address, UID: uid, Reason: reason})
	t.opts.Logger.Info("inbox delivery report unmatched", "mailbox", mb.address, "uid", uid, "reason", reason, "tick_id", t.opts.TickID)
	return nil
}

// suspicious records the one inbox_suspicious event of a message. A
// flood of forged reports is one Slack alert per mailbox per hour (the
// hour this tick started in): the first event of the hour is the alert,
// the others stay in the outbox unposted (`events list` shows them).
func (t *inboxTick) suspicious(ctx context.Context, tx pgx.Tx, mb mailbox, cp *store.InboxCheckpoint, uid uint32, f Finding, never int) error {
	from := eventSender(f.From)
	reason := fmt.Sprintf("a delivery report from %s names %d addresses %s never mailed; it was ignored (one alert per mailbox an hour: `rindactl events list` shows every report)", from, never, mb.address)
	payload := map[string]any{"address": mb.address, "uid": uid, "uid_validity": cp.UIDValidity, "from": from,
		"recipients": len(f.Recipients), "never_mailed": never, "reason": reason, "tick_id": t.opts.TickID}
	hour := t.start.Truncate(time.Hour).Unix()
	episode := fmt.Sprintf("inbox_suspicious:%d:hour:%d", mb.id, hour)
	key := fmt.Sprintf("inbox_suspicious:%d:%d:%d", mb.id, cp.UIDValidity, uid)
	alert, err := store.InsertSuspiciousEvent(ctx, tx, store.SuspiciousEvent{WorkspaceID: mb.workspaceID, MailboxID: mb.id, EpisodeKey: episode, MessageKey: key, Payload: payload})
	t.opts.Logger.Warn("inbox message ignored as suspicious", "mailbox", mb.address, "uid", uid, "reason", reason, "alert", alert, "tick_id", t.opts.TickID)
	return err
}
