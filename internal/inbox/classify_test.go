package inbox

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
)

const (
	testMailbox   = "sdr01@acme.test"
	testRecipient = "Ada.Lovelace@example.test"
)

// fixtureMessage is a sample message answering messageID, sent by
// testMailbox to recipient, with thread earlier in its References.
func fixtureMessage(t testing.TB, name, messageID, thread, recipient string) []byte {
	t.Helper()
	return imaptest.Sample(name, imaptest.Fill{MessageID: messageID, Thread: thread, Mailbox: testMailbox, Recipient: recipient})
}

func TestClassifyRealMessages(t *testing.T) {
	t.Parallel()
	const id, earlier = "K7Q2ZP3M4N5B6V7C@acme.test", "A1B2C3D4E5F6G7H8@acme.test"
	cases := []struct {
		file   string
		kind   Kind
		hard   bool
		status string
	}{
		{"gmail-bounce.eml", KindBounce, true, "5.1.1"},
		{"m365-bounce.eml", KindBounce, true, "5.1.10"},
		{"postfix-bounce.eml", KindBounce, true, "5.1.1"},
		{"postfix-delayed.eml", KindDelayed, false, ""},
		{"gmail-reply.eml", KindReply, false, ""},
		{"m365-reply.eml", KindReply, false, ""},
		{"postfix-reply.eml", KindReply, false, ""},
		{"m365-out-of-office.eml", KindAutoReply, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			f := Classify(fixtureMessage(t, tc.file, id, earlier, testRecipient))
			if f.Kind != tc.kind || f.Hard != tc.hard || f.Status != tc.status {
				t.Fatalf("finding = %+v, want kind %s hard %v status %q", f, tc.kind, tc.hard, tc.status)
			}
			if !slices.Contains(f.MessageIDs, id) {
				t.Errorf("message ids %v do not name the original %s", f.MessageIDs, id)
			}
			if tc.kind == KindBounce && !slices.Equal(f.Recipients, []string{strings.ToLower(testRecipient)}) {
				t.Errorf("bounced recipients = %v", f.Recipients)
			}
			if tc.file == "m365-reply.eml" && !slices.Contains(f.MessageIDs, earlier) {
				t.Errorf("References of a later step's reply %v miss the thread's first message", f.MessageIDs)
			}
		})
	}
}

func TestClassifyOddInput(t *testing.T) {
	t.Parallel()
	full := fixtureMessage(t, "postfix-bounce.eml", "X@acme.test", "", testRecipient)
	for name, raw := range map[string][]byte{
		"empty":     nil,
		"no header": []byte("just text"),
		"truncated": full[:bytes.Index(full, []byte("Undelivered Message Headers"))+40], // the original's headers are cut off
		"plain":     []byte("Subject: hello\r\n\r\nhi\r\n"),
	} {
		f := Classify(raw)
		switch name {
		case "truncated":
			// The delivery report survives; the original's id is gone, the
			// recipient is left to match on.
			if f.Kind != KindBounce || len(f.Recipients) != 1 {
				t.Errorf("%s: %+v, want a bounce with its recipient", name, f)
			}
		default:
			if f.Kind != KindOther {
				t.Errorf("%s: %+v, want other", name, f)
			}
		}
	}
}
