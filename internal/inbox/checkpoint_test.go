package inbox

import (
	"fmt"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
)

// Issue 37 item 4: the inbox never skips or loops.

// junk is n newsletters nobody answers (outcome "other").
func junk(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "From: news%d@list.test\r\nSubject: Deals %d\r\nMessage-ID: <deal-%d@list.test>\r\n\r\nBuy now.\r\n", i, i, i)
	}
	return out
}

func (f *inboxFixture) lastUID(mb string) string {
	f.t.Helper()
	return f.str(`SELECT c.last_uid::text FROM inbox_checkpoints c JOIN mailboxes m ON m.id = c.mailbox_id WHERE m.address = $1`, mb)
}

// A FETCH answered OK that leaves a requested message out must not move
// the checkpoint past it. Before: the checkpoint moved to 3 and the reply
// (UID 2) was never read.
func TestInboxTickCheckpointStopsBeforeAMessageLeftOut(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	msgs := append(junk(1), f.reply(1))
	msgs = append(msgs, junk(1)...)
	raw, mb := f.rawMailbox(1, rawOptions(msgs...))
	raw.Omit(2)

	f.tick(TickOptions{})
	if got := f.lastUID(mb); got != "1" || f.status(1) != "active" {
		t.Fatalf("UID 2 left out of the FETCH: checkpoint %s, lead 1 %s; want 1 and active", got, f.status(1))
	}
	raw.Omit()
	f.exec(`UPDATE inbox_checkpoints SET checked_at = NULL`)
	f.tick(TickOptions{})
	if got := f.lastUID(mb); got != "3" || f.status(1) != "replied" {
		t.Fatalf("next tick: checkpoint %s, lead 1 %s; want 3 and replied", got, f.status(1))
	}
}

// A server that changes UIDVALIDITY at every session: each tick goes on
// from where the last one stopped, by date, and reaches a reply beyond the
// first batch. Before: every tick read UIDs 1-100 again, never the reply at
// UID 120.
func TestInboxTickReadsOnByDateWhenUIDValidityChurns(t *testing.T) {
	t.Parallel()
	const batch, replyUID, n = 100, 120, 260
	f := newInboxFixture(t)
	msgs := junk(n)
	msgs[replyUID-1] = f.reply(1)
	base := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	dates := make([]time.Time, n)
	for i := range dates {
		dates[i] = base.Add(time.Duration(i) * time.Minute)
	}
	_, mb := f.rawMailbox(1, imaptest.RawOptions{Messages: msgs, Dates: dates, UIDValidityPerSession: true})

	var lasts []string
	for range 4 {
		f.exec(`UPDATE inbox_checkpoints SET checked_at = NULL`)
		f.tick(TickOptions{Batch: batch})
		lasts = append(lasts, f.lastUID(mb))
	}
	if f.status(1) != "replied" {
		t.Fatalf("after 4 ticks (checkpoints %v) the reply at UID %d was never read", lasts, replyUID)
	}
	if lasts[1] == lasts[0] || lasts[2] == lasts[1] {
		t.Errorf("checkpoints %v: a tick after a UIDVALIDITY change must go on, not start over", lasts)
	}
}

// A reply arriving behind thousands of junk messages is read by the next
// tick, and the backlog still moves oldest first, never skipping. Before:
// each tick read the next 200 oldest and the reply waited 10 ticks.
func TestInboxTickFindsAReplyInAFloodedMailbox(t *testing.T) {
	t.Parallel()
	const flood = 2000
	f := newInboxFixture(t)
	raw, mb := f.rawMailbox(1, rawOptions(junk(flood)...))

	f.tick(TickOptions{})
	first := f.lastUID(mb)
	raw.Append(f.reply(1))
	f.exec(`UPDATE inbox_checkpoints SET checked_at = NULL`)
	rep := f.tick(TickOptions{})
	if f.status(1) != "replied" || rep.Outcomes[OutcomeReplied] != 1 {
		t.Fatalf("the reply (UID %d) behind %d junk messages: lead 1 %s, report %+v", flood+1, flood, f.status(1), rep)
	}
	second := f.lastUID(mb)
	if first != "100" || second != "200" {
		t.Errorf("checkpoints %s then %s: the backlog must move oldest first, half a batch a tick", first, second)
	}
}

// A UID the server lists but never returns holds the checkpoint back once,
// then is passed over as skipped: the mailbox is never stuck behind it.
func TestInboxTickPassesOverAMessageLeftOutTwice(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	raw, mb := f.rawMailbox(1, rawOptions(junk(3)...))
	raw.Omit(2)

	f.tick(TickOptions{})
	if got := f.lastUID(mb); got != "1" {
		t.Fatalf("UID 2 left out once: checkpoint %s, want 1", got)
	}
	f.exec(`UPDATE inbox_checkpoints SET checked_at = NULL`)
	rep := f.tick(TickOptions{})
	if got := f.lastUID(mb); got != "3" || rep.Outcomes[OutcomeSkipped] != 1 || len(rep.Skipped) != 1 || rep.Skipped[0].UID != 2 {
		t.Fatalf("UID 2 left out twice: checkpoint %s, report %+v; want 3 and UID 2 skipped", got, rep)
	}
	if got := f.str(`SELECT reason FROM inbox_skipped WHERE uid = 2`); got != leftOutTwice {
		t.Errorf("inbox_skipped reason %q", got)
	}
}
