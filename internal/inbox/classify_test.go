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
			// The delivery report survives; the original's id is gone, so
			// only a VERP return path could still prove it ours.
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

func TestClassifyUnsubscribeReplies(t *testing.T) {
	t.Parallel()
	reply := func(subject, contentType, body string) []byte {
		return []byte("From: Ada <ada@example.test>\r\nSubject: " + subject + "\r\nIn-Reply-To: <X1@acme.test>\r\nContent-Type: " + contentType + "\r\n\r\n" + body)
	}
	const plain = "text/plain; charset=utf-8"
	for name, tc := range map[string]struct {
		raw  []byte
		want bool
	}{
		"stop":                   {reply("Re: Hi Ada", plain, "STOP\r\n"), true},
		"please remove me":       {reply("Re: Hi Ada", plain, "Please remove me from your list.\r\n\r\nAda\r\n"), true},
		"unsubscribe":            {reply("Re: Hi Ada", plain, "Hi,\r\nhow do I unsubscribe?\r\n"), true},
		"dont email":             {reply("Re: Hi Ada", plain, "Don't email me again.\r\n"), true},
		"subject":                {reply("Unsubscribe", plain, "\r\n"), true},
		"korean":                 {reply("Re: 안녕하세요", plain, "수신거부합니다.\r\n"), true},
		"korean euc-kr":          {reply("Re: Hi", "text/plain; charset=ks_c_5601-1987", "\xbc\xf6\xbd\xc5\xb0\xc5\xba\xce\r\n"), true},
		"korean encoded subject": {reply("=?UTF-8?B?7IiY7Iug6rGw67aA?=", plain, "\r\n"), true},
		"html only":              {reply("Re: Hi", "text/html; charset=utf-8", "<div>Remove&nbsp;me please</div><div><br></div>"), true},
		"interested":             {reply("Re: Hi Ada", plain, "Sounds interesting, can we talk on Thursday?\r\n"), false},
		"stop in a sentence":     {reply("Re: Hi Ada", plain, "I can't stop thinking about your offer.\r\n"), false},
		"only in the quote":      {reply("Re: Hi Ada", plain, "Thanks, call me.\r\n\r\nOn Tue, Dana wrote:\r\n> Reply STOP to unsubscribe\r\n"), false},
		"below three lines":      {reply("Re: Hi Ada", plain, "Hi\r\nyes\r\nThursday works\r\nunsubscribe my colleague though\r\n"), false},
	} {
		t.Run(name, func(t *testing.T) {
			f := Classify(tc.raw)
			if f.Kind != KindReply || f.Unsubscribe != tc.want {
				t.Fatalf("finding = %+v, want a reply with Unsubscribe %v", f, tc.want)
			}
		})
	}
}

// A forged or nested report is not one; a well-formed one from anyone
// still is (the tick decides whether it is about our mail).
func TestClassifyRequiresATopLevelReport(t *testing.T) {
	t.Parallel()
	report := func(ct string) []byte {
		return []byte("From: mallory@evil.test\r\nContent-Type: " + ct + "\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; x\r\n\r\n" +
			"Final-Recipient: rfc822; Lead1@Example.test\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n")
	}
	for ct, want := range map[string]Kind{
		"multipart/report; report-type=delivery-status; boundary=b":          KindBounce,
		"multipart/report; report-type=\"Delivery-Status\"; boundary=b":      KindBounce,
		"multipart/mixed; boundary=b":                                        KindOther,
		"multipart/report; report-type=disposition-notification; boundary=b": KindOther,
		"multipart/report; boundary=b":                                       KindOther,
	} {
		if f := Classify(report(ct)); f.Kind != want {
			t.Errorf("%s: %+v, want %s", ct, f, want)
		} else if want == KindBounce && (len(f.Recipients) != 1 || f.Recipients[0] != "lead1@example.test" || f.From != "mallory@evil.test") {
			t.Errorf("%s: %+v", ct, f)
		}
	}
	nested := []byte("Content-Type: multipart/mixed; boundary=a\r\n\r\n--a\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: message/delivery-status\r\n\r\nX: y\r\n\r\nFinal-Recipient: rfc822; a@b.test\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n--a--\r\n")
	if f := Classify(nested); f.Kind != KindOther {
		t.Errorf("a report inside a multipart/mixed: %+v, want other", f)
	}
}

// Header values reach SQL only as valid UTF-8 without NULs or controls.
func TestHeaderText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"J\xf6rg <j@legacy.test>":            "Jörg <j@legacy.test>",
		"=?iso-8859-1?q?J=F6rg?= <j@x.test>": "Jörg <j@x.test>",
		"=?euc-kr?B?vPa9xbDFus4=?=":          "수신거부",
		"a\x00b\r\n\tc":                      "a b   c",
		"=?utf-8?q?bad=FF?=":                 "badÿ",
		"plain":                              "plain",
	} {
		if got := headerText(in); got != want {
			t.Errorf("headerText(%q) = %q, want %q", in, got, want)
		}
	}
}
