package inbox

import (
	"fmt"
	"strings"
	"testing"
)

// A reply asking to stop ends the sequence as unsubscribed and suppresses
// the address (before: replied, and the address stayed mailable).
func TestInboxTickEndsStopRepliesAsUnsubscribed(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	for n, body := range map[int]string{1: "Please remove me from your list.", 2: "수신거부합니다", 3: "Sounds good, call me."} {
		id, mb := f.sent(n)
		raw := fmt.Sprintf("From: Lead%d@Example.test\r\nTo: %s\r\nSubject: Re: Hi\r\nIn-Reply-To: <%s>\r\nReferences: <%s>\r\n"+
			"Content-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n\r\nOn Tue, Dana <%s> wrote:\r\n> Hello\r\n", n, mb, id, id, body, mb)
		if err := f.imap.Deliver(mb, []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	rep := f.tick(TickOptions{})
	for n, want := range map[int]string{1: "unsubscribed", 2: "unsubscribed", 3: "replied"} {
		if got := f.status(n); got != want {
			t.Errorf("lead %d: %s, want %s (report %+v)", n, got, want, rep)
		}
	}
	if got := f.str(`SELECT string_agg(email || '=' || reason, ',' ORDER BY email) FROM suppressions`); got != "lead1@example.test=unsubscribed,lead2@example.test=unsubscribed" {
		t.Errorf("suppressions = %s", got)
	}
	if rep.Outcomes[OutcomeUnsubscribed] != 2 || rep.Outcomes[OutcomeReplied] != 1 {
		t.Errorf("report = %+v", rep)
	}
}

// A message nothing can process (here the classifier breaks on it) is
// recorded as skipped with its UID and reason, in the report and the
// database; the checkpoint moves past it and the reply behind it is read.
func TestInboxTickSkipsWhatItCannotProcess(t *testing.T) {
	f := newInboxFixture(t) // not parallel: it swaps the classifier
	defer func(c func([]byte) Finding) { classify = c }(classify)
	classify = func(raw []byte) Finding {
		if strings.Contains(string(raw), "X-Poison: yes") {
			panic("unreadable message")
		}
		return Classify(raw)
	}
	_, mb := f.rawMailbox(1, rawOptions([]byte("X-Poison: yes\r\nSubject: x\r\n\r\nx\r\n"), f.reply(1)))

	rep := f.tick(TickOptions{})
	if f.status(1) != "replied" || rep.Outcomes[OutcomeSkipped] != 1 {
		t.Fatalf("report %+v, lead 1 %s", rep, f.status(1))
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].UID != 1 || rep.Skipped[0].Mailbox != mb || !strings.Contains(rep.Skipped[0].Reason, "unreadable message") {
		t.Errorf("skipped = %+v", rep.Skipped)
	}
	if got := f.str(`SELECT s.uid || ' ' || s.reason FROM inbox_skipped s JOIN mailboxes m ON m.id = s.mailbox_id WHERE m.address = $1`, mb); !strings.HasPrefix(got, "1 ") {
		t.Errorf("inbox_skipped = %q", got)
	}
	if got := f.str(`SELECT last_uid::text FROM inbox_checkpoints c JOIN mailboxes m ON m.id = c.mailbox_id WHERE m.address = $1`, mb); got != "2" {
		t.Errorf("checkpoint at UID %s, want past both messages", got)
	}
}
