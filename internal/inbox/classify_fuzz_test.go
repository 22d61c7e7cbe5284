package inbox

import (
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
)

// FuzzClassify feeds arbitrary bytes, as any sender can put in an INBOX, to
// the classifier: it must never panic, and what it returns must be usable
// as is (Message-IDs without brackets or spaces, lower-case recipients).
func FuzzClassify(f *testing.F) {
	for _, name := range []string{"gmail-bounce.eml", "m365-bounce.eml", "postfix-bounce.eml", "postfix-delayed.eml",
		"gmail-reply.eml", "m365-reply.eml", "postfix-reply.eml", "m365-out-of-office.eml"} {
		f.Add(imaptest.Sample(name, imaptest.Fill{MessageID: "X1@acme.test", Thread: "X0@acme.test", Mailbox: "a@acme.test", Recipient: "B@example.test"}))
	}
	f.Add([]byte("Content-Type: multipart/report; boundary=b\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\n\r\nAction: failed\r\nStatus:\r\n--b--\r\n"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=a\r\n\r\n--a\r\nContent-Type: multipart/mixed; boundary=a\r\n\r\n--a\r\n"))
	f.Add([]byte("Content-Type: multipart/report; boundary=b\r\n\r\n--b\r\nContent-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!!\r\n--b--\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := Classify(raw)
		for _, id := range got.MessageIDs {
			if id == "" || strings.ContainsAny(id, "<> \t\r\n") {
				t.Fatalf("message id %q", id)
			}
		}
		for _, r := range got.Recipients {
			if r != strings.ToLower(r) {
				t.Fatalf("recipient %q is not lower case", r)
			}
		}
		if got.Hard && got.Kind != KindBounce {
			t.Fatalf("hard %s", got.Kind)
		}
	})
}
