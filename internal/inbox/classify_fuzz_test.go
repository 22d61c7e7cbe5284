package inbox

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
)

// clean reports whether s may reach SQL and events as is: valid UTF-8
// without NUL or other control characters.
func clean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return false
		}
	}
	return true
}

// checkFinding asserts what the tick relies on in any Finding.
func checkFinding(t *testing.T, got Finding) {
	t.Helper()
	for _, id := range got.MessageIDs {
		if !isPrintableASCII(id) || strings.ContainsAny(id, "<>") {
			t.Fatalf("message id %q", id)
		}
	}
	if len(got.MessageIDs) > 2*messageIDsMax {
		t.Fatalf("%d message ids", len(got.MessageIDs))
	}
	seen := map[string]bool{}
	for _, r := range got.Recipients {
		if r != strings.ToLower(r) || !clean(r) || len(r) > addressMax || !strings.Contains(r, "@") || seen[r] {
			t.Fatalf("recipient %q", r)
		}
		seen[r] = true
	}
	for _, r := range got.Failed {
		for _, a := range []string{r.Final, r.Original} {
			if a != strings.ToLower(a) || !clean(a) || len(a) > addressMax || a != "" && !strings.Contains(a, "@") {
				t.Fatalf("failed recipient %q", a)
			}
		}
	}
	if got.Kind != KindBounce && len(got.Failed) > 0 || len(got.MessageIDs) > reportIDsMax {
		t.Fatalf("finding %+v", got)
	}
	for _, a := range append(got.EnvelopeTo, got.From, got.Status) {
		if !clean(a) {
			t.Fatalf("unclean value %q", a)
		}
	}
	if got.Hard && got.Kind != KindBounce || got.Unsubscribe && got.Kind != KindReply {
		t.Fatalf("finding %+v", got)
	}
}

var hostileSeeds = [][]byte{
	[]byte("Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\n\r\nAction: failed\r\nStatus:\r\n--b--\r\n"),
	[]byte("Content-Type: multipart/mixed; boundary=a\r\n\r\n--a\r\nContent-Type: multipart/mixed; boundary=a\r\n\r\n--a\r\n"),
	[]byte("Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!!\r\n--b--\r\n"),
	[]byte("References: <caf\xe9-1@legacy.test> <x\xff@y>\r\nIn-Reply-To: <a\x00b@nul.test>\r\nFrom: =?iso-8859-1?q?J=F6rg?= <j@x.test>\r\n\r\nSTOP\r\n"),
	[]byte("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\nX: y\r\n\r\nFinal-Recipient: rfc822; Lead1@Example.test\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n"),
	[]byte("To: sdr01+b.abc.def@acme.test, \"x\" <y@z>\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nX: y\r\n\r\nFinal-Recipient: utf-8; =C3=A9@x.test\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n"),
	[]byte("In-Reply-To: <X1@acme.test>\r\nContent-Type: text/plain; charset=ks_c_5601-1987\r\n\r\n\xbc\xf6\xbd\xc5\xb0\xc5\xba\xce\r\n"),
	// Auto-reply markers (issue 37): each alone makes a reply automatic.
	[]byte("Return-Path: < >\r\nReturn-Path: <a@b>\r\nIn-Reply-To: <X1@acme.test>\r\n\r\nSTOP\r\n"),
	[]byte("Precedence: Bulk; x\r\nX-Auto-Response-Suppress: All\r\nIn-Reply-To: <X1@acme.test>\r\n\r\nout of office\r\n"),
	[]byte("Auto-Submitted: no\r\nList-Id: <l.x>\r\nList-Unsubscribe: <mailto:u@x>\r\nX-Autorespond: y\r\nReferences: <X1@acme.test>\r\n\r\nhi\r\n"),
	// A report naming our Message-ID in its headers and per-message fields,
	// with a forwarded recipient.
	[]byte("In-Reply-To: <X1@acme.test>\r\nReferences: <X0@acme.test> <X1@acme.test>\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: message/delivery-status\r\n\r\nOriginal-Message-ID: <X1@acme.test>\r\n\r\nFinal-Recipient: rfc822; Alias@X.test\r\n" +
		"Original-Recipient: rfc822; B@Example.test\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n"),
}

// FuzzClassify feeds arbitrary bytes, as any sender can put in an INBOX, to
// the classifier: it must never panic, and what it returns must be usable
// as is (Message-IDs printable ASCII without brackets, recipients lower
// case, every value valid UTF-8 without NUL or control characters).
func FuzzClassify(f *testing.F) {
	for _, name := range []string{"gmail-bounce.eml", "m365-bounce.eml", "postfix-bounce.eml", "postfix-delayed.eml",
		"gmail-reply.eml", "m365-reply.eml", "postfix-reply.eml", "m365-out-of-office.eml"} {
		f.Add(imaptest.Sample(name, imaptest.Fill{MessageID: "X1@acme.test", Thread: "X0@acme.test", Mailbox: "a@acme.test", Recipient: "B@example.test"}))
	}
	for _, s := range hostileSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkFinding(t, Classify(raw))
	})
}

// FuzzDeliveryStatus puts arbitrary bytes in the delivery-status part of a
// well-formed report, so the fuzzer spends its time in the DSN parser.
func FuzzDeliveryStatus(f *testing.F) {
	f.Add([]byte("Reporting-MTA: dns; x\r\n\r\nFinal-Recipient: rfc822; Lead1@Example.test\r\nAction: failed\r\nStatus: 5.1.1 (bad)\r\n"))
	f.Add([]byte("X-Original-Message-ID: <A@b>\r\n\r\nFinal-Recipient: rfc822;<a\x00@b>\r\nAction: failed\r\nStatus: 4.4.7\r\n\r\nOriginal-Recipient: utf-8; j\xf6rg@x\r\nAction: FAILED\r\nStatus: 5\r\n"))
	f.Add([]byte("\r\n\r\nFinal-Recipient: rfc822; a@b\r\nAction: delayed\r\n\r\nFinal-Recipient: rfc822; a@b\r\nAction: failed\r\nStatus: 5.1.1\r\n"))
	f.Add([]byte("Final-Recipient: =?utf-8?b?w6lAeC50ZXN0?=\r\n folded: x\r\n\r\nAction: failed\r\n"))
	f.Add([]byte("Original-Message-ID: <X2@acme.test>\r\n\r\nFinal-Recipient: rfc822; alias@x.test\r\nOriginal-Recipient: rfc822; B@example.test\r\nAction: failed\r\nStatus: 4.4.7\r\n\r\nFinal-Recipient: rfc822; c@x.test\r\nAction: failed\r\nStatus: 5.1.1\r\n"))
	f.Fuzz(func(t *testing.T, status []byte) {
		raw := append([]byte("From: MAILER-DAEMON@x.test\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"+
			"--b\r\nContent-Type: message/delivery-status\r\n\r\n"), status...)
		raw = append(raw, "\r\n--b\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <X1@acme.test>\r\n--b--\r\n"...)
		got := Classify(raw)
		checkFinding(t, got)
		if got.Kind != KindBounce && got.Kind != KindDelayed && got.Kind != KindOther {
			t.Fatalf("a report classified as %s", got.Kind)
		}
	})
}

// FuzzHeaderText decodes arbitrary header values: the result is always
// valid UTF-8 without NUL or control characters, and cleaning it again
// changes nothing.
func FuzzHeaderText(f *testing.F) {
	for _, s := range []string{"J\xf6rg <j@legacy.test>", "=?iso-8859-1?q?J=F6rg?= <j@x.test>", "=?euc-kr?B?vPa9xbDFus4=?=",
		"a\x00b\r\n\tc", "=?utf-8?q?bad=FF?=", "=?x-unknown?q?a?=", "=?utf-8?b?AA==?=", "<caf\xe9-1@legacy.test>", "\u202e evil"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := headerText(v)
		if !clean(got) {
			t.Fatalf("headerText(%q) = %q", v, got)
		}
		if again := cleanText(got); again != got {
			t.Fatalf("cleanText is not idempotent: %q then %q", got, again)
		}
		if c := clip(got, 10); !utf8.ValidString(c) || len(c) > 10 {
			t.Fatalf("clip(%q) = %q", got, c)
		}
	})
}
