package inbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
)

// Issue 37 item 1: every byte from a mail server is bounded by size and by
// the tick's deadline, inside the IMAP library too. Each hostile server
// is met by a real `rindactl inbox tick` process held to a hard address
// space limit, so a regression fails the test, not the machine.

const (
	// hostileMaxDuration is the tick's --max-duration.
	hostileMaxDuration = 6 * time.Second
	// hostileExitSlack is how long past --max-duration the test waits
	// before calling the tick stuck: generous, for a loaded machine (the
	// tick's own bound is --max-duration plus the 1 s session grace).
	hostileExitSlack = 60 * time.Second
	// hostileAddressSpace is the child's RLIMIT_AS: the Go runtime reserves
	// about 1 GiB of address space at start; a runaway allocation fails
	// here instead of reaching the machine's memory.
	hostileAddressSpace = 2 << 30
	// hostileRSSMax is the peak resident memory a tick may reach against
	// any hostile server (issue 37: 100 MB).
	hostileRSSMax = 100 << 20
)

// childTick is what one inbox tick process did.
type childTick struct {
	code           int
	stdout, stderr string
	took           time.Duration
	maxRSS         int64 // bytes
}

// runInboxTick runs `rindactl inbox tick` against the fixture's database
// under hostileAddressSpace (no GOMEMLIMIT: the peak RSS is what a
// production tick reaches), killed if it outlives --max-duration by
// hostileExitSlack.
func (f *inboxFixture) runInboxTick() childTick {
	f.t.Helper()
	bin := rindactlBinary(f.t)
	ctx, cancel := context.WithTimeout(context.Background(), hostileMaxDuration+hostileExitSlack)
	defer cancel()
	limit := "ulimit -v " + strconv.Itoa(hostileAddressSpace>>10) + " && exec \"$0\" \"$@\""
	cmd := exec.CommandContext(ctx, "sh", "-c", limit, bin, "inbox", "tick", "--max-duration", hostileMaxDuration.String(), "--output", "json")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "DATABASE_URL=" + f.tickURL,
		passwordEnv + "=" + password}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		f.t.Fatalf("inbox tick still running %v after its --max-duration %v: killed (stderr %s)", took-hostileMaxDuration, hostileMaxDuration, clip(errOut.String(), 2000))
	}
	r := childTick{stdout: out.String(), stderr: errOut.String(), took: took}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss << 10
	}
	f.t.Logf("inbox tick: exit %d after %v, peak RSS %.1f MB", r.code, took.Round(time.Millisecond), float64(r.maxRSS)/(1<<20))
	return r
}

// checkBounded asserts the tick stayed within its memory bound.
func (f *inboxFixture) checkBounded(r childTick) {
	f.t.Helper()
	if r.maxRSS > hostileRSSMax {
		f.t.Errorf("peak RSS %.1f MB, over %d MB", float64(r.maxRSS)/(1<<20), hostileRSSMax>>20)
	}
}

// A server answering UID SEARCH with "* SEARCH 1 2 4294967295" (a legal
// UID): the IMAP library's AllUIDs counts a uint32 up to 4294967295 and
// wraps, forever. Before: 489 s for --max-duration 6s, 23 GB, OOM; here
// the child dies at its address space limit or is killed, failing the
// test. Now the ranges are never expanded: the tick reads UIDs 1 and 2.
func TestInboxTickSurvivesAUIDAtTheTopOfTheRange(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	f.rawMailbox(1, imaptest.RawOptions{Messages: [][]byte{junk(1)[0], f.reply(1)}, Hostile: imaptest.HostileUIDWrap})

	r := f.runInboxTick()
	if r.code != 0 || f.status(1) != "replied" {
		t.Fatalf("UID 4294967295 in a search: %s\nlead 1 %s; want exit 0 and the reply (UID 2) read", r.stderr, f.status(1))
	}
	f.checkBounded(r)
}

// Servers that send without end: each is dropped at a cap, the mailbox
// is reported (exit 1, its checkpoint's last_error names the cap), and the
// tick's memory stays bounded. Before: 1.2-2.8 GB and 12.7-14.4 s for
// --max-duration 6s.
func TestInboxTickDropsAServerThatSendsWithoutEnd(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		hostile imaptest.Hostile
		what    string
	}{
		{"endless literal", imaptest.HostileEndlessLiteral, "a literal"},
		{"endless greeting line", imaptest.HostileEndlessGreeting, "a line"},
		{"endless responses", imaptest.HostileEndlessResponses, "responses to one command"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newInboxFixture(t)
			_, mb := f.rawMailbox(1, imaptest.RawOptions{Messages: [][]byte{f.reply(1)}, Hostile: c.hostile})

			r := f.runInboxTick()
			lastError := f.str(`SELECT coalesce(c.last_error, '') FROM inbox_checkpoints c JOIN mailboxes m ON m.id = c.mailbox_id WHERE m.address = $1`, mb)
			if r.code != 1 || !strings.Contains(lastError, "sent "+c.what) || !strings.Contains(lastError, "over the cap") {
				t.Fatalf("exit %d, mailbox %s last_error %q; want exit 1 and the mailbox reported for %s over its cap\nstderr: %s",
					r.code, mb, lastError, c.what, clip(r.stderr, 2000))
			}
			f.checkBounded(r)
		})
	}
}

// A server under every cap that never finishes its greeting: the session
// ends at the tick's deadline (--max-duration plus the 1 s session grace),
// a cut, not the mailbox's failure.
func TestInboxTickEndsAtItsDeadlineAgainstATrickle(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	f.rawMailbox(1, imaptest.RawOptions{Messages: [][]byte{f.reply(1)}, Hostile: imaptest.HostileTrickle})

	r := f.runInboxTick()
	if r.code != 0 || !strings.Contains(r.stdout, `"session_cut": 1`) && !strings.Contains(r.stdout, `"session_cut":1`) {
		t.Fatalf("trickling greeting: exit %d, stdout %s; want exit 0 and one session cut", r.code, clip(r.stdout, 2000))
	}
	f.checkBounded(r)
}

// A server that ignores the partial FETCH and sends every message whole,
// each just under the literal cap: the largest answer the caps let
// through still keeps the tick's memory bounded, and is read.
func TestInboxTickStaysBoundedAtTheLiteralCap(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	big := junk(2 * chunkSize)
	for i := range big {
		big[i] = append(big[i], bytes.Repeat([]byte("0123456789abcdef\r\n"), (wireLiteralMax-len(big[i]))/18)...)
	}
	f.rawMailbox(1, imaptest.RawOptions{Messages: big})

	r := f.runInboxTick()
	if r.code != 0 || !strings.Contains(r.stdout, `"messages": 50`) && !strings.Contains(r.stdout, `"messages":50`) {
		t.Fatalf("50 messages of %d bytes: exit %d, stdout %s", wireLiteralMax, r.code, clip(r.stdout, 2000))
	}
	f.checkBounded(r)
}
