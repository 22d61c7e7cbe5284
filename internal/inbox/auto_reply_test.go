package inbox

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 37, item 3: out-of-office, challenge-response and list mail is
// recognised by every common marker and never ends a sequence as a reply.

// autoReplyMarkers are the header lines each of which alone marks a
// message as automatic. Before the fix the first seven ended sequences
// as replied.
var autoReplyMarkers = []string{
	"Precedence: auto_reply",
	"Precedence: bulk",
	"Precedence: junk",
	"Precedence: List",
	"X-Auto-Response-Suppress: All",
	"Return-Path: <>",
	"Return-Path:  < > ",
	"List-Id: Sales team <sales.lists.example.test>",
	"List-Unsubscribe: <mailto:leave@lists.example.test>",
	"X-Autoreply: yes",
	"X-Autorespond: Out of office",
	"Auto-Submitted: auto-replied",
	"auto-submitted: Auto-Generated",
}

// humanReply answers messageID from a person, with extra header lines,
// whose first line is body.
func humanReply(messageID string, extra []string, body string) []byte {
	h := "From: Ada <lead1@example.test>\r\nTo: sdr01@acme.test\r\nSubject: Re: Hi Ada\r\nIn-Reply-To: <" + messageID + ">\r\nReferences: <" + messageID + ">\r\n"
	for _, e := range extra {
		h += e + "\r\n"
	}
	return []byte(h + "Content-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n\r\nOn Tue, Dana wrote:\r\n> Hello Ada\r\n")
}

func TestClassifyAutoReplyMarkers(t *testing.T) {
	t.Parallel()
	for _, marker := range autoReplyMarkers {
		for _, body := range []string{"I am out of the office until Monday.", "STOP"} {
			if f := Classify(humanReply("X1@acme.test", []string{marker}, body)); f.Kind != KindAutoReply || f.Unsubscribe {
				t.Errorf("%q, %q: %+v, want an auto-reply", marker, body, f)
			}
		}
	}
	// Not markers: a person's reply stays a reply.
	for _, line := range []string{"Auto-Submitted: no", "Precedence: first-class", "Return-Path: <lead1@example.test>", "X-Mailer: Outlook"} {
		if f := Classify(humanReply("X1@acme.test", []string{line}, "STOP")); f.Kind != KindReply || !f.Unsubscribe {
			t.Errorf("%q: %+v, want a reply asking to stop", line, f)
		}
	}
	// An automatic message answering nothing is counted as one too.
	if f := Classify([]byte("From: x@example.test\r\nPrecedence: bulk\r\nSubject: News\r\n\r\nhi\r\n")); f.Kind != KindAutoReply {
		t.Errorf("a bulk message: %+v, want an auto-reply", f)
	}
}

// Each marker alone, on a message answering lead 1's step 1: lead 1's
// sequence goes on and each is counted as an auto-reply; a person's reply
// to lead 2 still ends that one. A delivery report with a null
// Return-Path (as every real one has) still bounces when proven.
func TestInboxTickAutoRepliesNeverEndASequence(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	id1, mb1 := f.sent(1)
	for _, marker := range autoReplyMarkers {
		if err := f.imap.Deliver(mb1, humanReply(id1, []string{marker}, "Thanks, call me on Thursday.")); err != nil {
			t.Fatal(err)
		}
	}
	id2, mb2 := f.sent(2)
	if err := f.imap.Deliver(mb2, humanReply(id2, []string{"Auto-Submitted: no"}, "Thanks, call me on Thursday.")); err != nil {
		t.Fatal(err)
	}
	bounce := f.deliver("postfix-bounce.eml", 3)
	if !strings.Contains(string(bounce), "Return-Path: <>") {
		t.Fatal("the Postfix sample lost its null Return-Path")
	}

	rep := f.tick(TickOptions{})
	if got := f.status(1); got != "active" {
		t.Errorf("lead 1: %s after %d auto-replies, want active (report %+v)", got, len(autoReplyMarkers), rep)
	}
	if f.status(2) != "replied" || f.status(3) != "bounced" {
		t.Errorf("lead 2 %s, lead 3 %s; want replied and bounced", f.status(2), f.status(3))
	}
	if rep.Outcomes[OutcomeAutoReply] != len(autoReplyMarkers) || rep.Outcomes[OutcomeReplied] != 1 || rep.Outcomes[OutcomeBounced] != 1 || rep.Outcomes[OutcomeAlreadyEnded] != 0 {
		t.Errorf("report %+v, want %d auto-replies, 1 replied, 1 bounced", rep, len(autoReplyMarkers))
	}
	if got := f.str(`SELECT (counts->>'auto_reply') FROM tick_runs WHERE kind = 'inbox' ORDER BY id DESC LIMIT 1`); got != fmt.Sprint(len(autoReplyMarkers)) {
		t.Errorf("tick_runs counts auto_reply = %s, want %d", got, len(autoReplyMarkers))
	}
}
