package inbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
)

// The INBOX is an input from anyone on the internet (issue 25): these tests
// play the sender or the server as an attacker would.

// rawMailbox points the mailbox that sent lead n's step 1 at a scripted raw
// IMAP server (the other mailbox stops being read) and returns the server.
func (f *inboxFixture) rawMailbox(n int, opts imaptest.RawOptions) (*imaptest.Raw, string) {
	f.t.Helper()
	_, mb := f.sent(n)
	opts.Password = password
	raw := imaptest.NewRaw(f.t, opts)
	f.exec(`UPDATE mailboxes SET imap_url = $1 WHERE address = $2`, raw.URL(mb), mb)
	f.exec(`UPDATE mailboxes SET imap_url = NULL WHERE address <> $1`, mb)
	return raw, mb
}

// rawOptions serves these messages as UIDs 1, 2, ...
func rawOptions(msgs ...[]byte) imaptest.RawOptions {
	return imaptest.RawOptions{Messages: msgs}
}

// reply is a genuine reply to lead n's step 1, as the mailbox receives it.
func (f *inboxFixture) reply(n int) []byte {
	f.t.Helper()
	id, mb := f.sent(n)
	raw := fixtureMessage(f.t, "postfix-reply.eml", id, id, fmt.Sprintf("Lead%d@Example.test", n))
	return []byte(strings.ReplaceAll(string(raw), testMailbox, mb))
}

// Finding 2: a References header with a Latin-1 byte, then one with a NUL,
// then the lead's genuine reply. The reply must be read and the mailbox
// must not be blocked; before the fix the chunk failed in Postgres
// ("invalid byte sequence for encoding UTF8") on every tick and the reply
// was never read.
func TestInboxTickReadsPastPoisonHeaders(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	latin1 := "From: Jörg <j@legacy.test>\r\nSubject: Re: Hi\r\nReferences: <caf\xe9-1@legacy.test> <x\xff@y>\r\n" +
		"In-Reply-To: <caf\xe9-1@legacy.test>\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\nJ'ai re\xe7u\r\n"
	nul := "From: n@nul.test\r\nSubject: Re: Hi\r\nReferences: <a\x00b@nul.test>\r\nIn-Reply-To: <a\x00b@nul.test>\r\n\r\nhi\x00there\r\n"
	raw, mb := f.rawMailbox(1, imaptest.RawOptions{Messages: [][]byte{[]byte(latin1), []byte(nul), f.reply(1)}})

	rep, err := RunTick(context.Background(), f.tickPool, TickOptions{LookupEnv: lookupEnv})
	if err != nil {
		t.Fatalf("inbox tick: %v (a poison message must not fail the mailbox)", err)
	}
	if rep.Messages != 3 || rep.Outcomes[OutcomeReplied] != 1 || f.status(1) != "replied" {
		t.Fatalf("report %+v, lead 1 %s: the genuine reply behind the poison must be read", rep, f.status(1))
	}
	if got := f.str(`SELECT c.last_uid || '/' || coalesce(c.last_error, '') FROM inbox_checkpoints c JOIN mailboxes m ON m.id = c.mailbox_id WHERE m.address = $1`, mb); got != "3/" {
		t.Errorf("checkpoint = %q, want past all three messages and no error", got)
	}
	if raw.Fetches() == 0 {
		t.Error("the raw server was never read")
	}
}

// Finding 3: a server that stalls mid-FETCH for 60 s. The tick ends near
// its --max-duration (asserted only as: before the stall would have ended),
// without calling it a mailbox failure, and the next tick reads the
// message.
func TestInboxTickEndsAtItsDeadlineWhenTheServerStalls(t *testing.T) {
	t.Parallel()
	const stall = 60 * time.Second
	f := newInboxFixture(t)
	raw, _ := f.rawMailbox(1, imaptest.RawOptions{Messages: [][]byte{f.reply(1)}, FetchStall: stall})

	start := time.Now()
	rep, err := RunTick(context.Background(), f.tickPool, TickOptions{LookupEnv: lookupEnv, MaxDuration: 3 * time.Second})
	if took := time.Since(start); took >= stall {
		t.Fatalf("the tick took %v: it waited for the stalled server instead of its 3s deadline", took)
	}
	if err != nil || rep.Outcomes[OutcomeMailboxError] != 0 {
		t.Fatalf("cut at its own deadline: %+v, %v; want no mailbox failure", rep, err)
	}
	select {
	case <-raw.Stalled():
	default:
		t.Fatal("the server never stalled: the test did not test anything")
	}
	if got := f.str(`SELECT count(*)::text FROM inbox_checkpoints WHERE locked_by IS NOT NULL`); got != "0" {
		t.Errorf("%s mailboxes left leased", got)
	}
	if rep := f.tick(TickOptions{}); rep.Outcomes[OutcomeReplied] != 1 {
		t.Errorf("next tick = %+v, want the reply read", rep)
	}
}

// Finding 3, the lease: a session never outlives the mailbox's lease, so no
// second tick can lease the mailbox while the first still reads it, even
// with a --max-duration longer than the lease.
func TestInboxTickSessionEndsWithinItsLease(t *testing.T) {
	t.Parallel()
	const stall = 60 * time.Second
	f := newInboxFixture(t)
	f.rawMailbox(1, imaptest.RawOptions{Messages: [][]byte{f.reply(1)}, FetchStall: stall})

	start := time.Now()
	rep, err := RunTick(context.Background(), f.tickPool, TickOptions{LookupEnv: lookupEnv, MaxDuration: 40 * time.Second, Lease: 3 * time.Second})
	if took := time.Since(start); took >= stall {
		t.Fatalf("the tick took %v: its session outlived its 3s lease", took)
	}
	if err != nil || rep.Messages != 0 {
		t.Fatalf("cut at its lease: %+v, %v", rep, err)
	}
}

// SIGTERM while the server stalls: the tick stops at once (the connection
// is closed, whatever the IMAP library's own timeouts), and it is no
// failure.
func TestInboxTickStopsWhileTheServerStalls(t *testing.T) {
	t.Parallel()
	const stall = 60 * time.Second
	f := newInboxFixture(t)
	raw, _ := f.rawMailbox(1, imaptest.RawOptions{Messages: [][]byte{f.reply(1)}, FetchStall: stall})
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		<-raw.Stalled()
		stop()
	}()
	start := time.Now()
	rep, err := RunTick(ctx, f.tickPool, TickOptions{LookupEnv: lookupEnv})
	if took := time.Since(start); took >= stall {
		t.Fatalf("the tick took %v after SIGTERM", took)
	}
	if err != nil || rep.Outcomes[OutcomeMailboxError] != 0 {
		t.Fatalf("stopped tick = %+v, %v", rep, err)
	}
}
