package unsubscribe_test

import (
	"bytes"
	"net/mail"
	"net/url"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/unsubscribe"
)

func TestParseMailtoRequest(t *testing.T) {
	t.Parallel()
	tok := unsubscribe.Sign(bytes.Repeat([]byte{1}, unsubscribe.KeySize), 42)
	u, err := url.Parse(unsubscribe.MailtoURL("sdr01@acme.test", tok))
	if err != nil || u.Scheme != "mailto" || u.Opaque != "sdr01@acme.test" || u.Query().Get("subject") != "unsubscribe "+tok {
		t.Fatalf("MailtoURL = %v %v", u, err)
	}
	for _, tc := range []struct {
		name, headers string
		want          bool
	}{
		{"subject as the mailto: URL sets it", "Subject: unsubscribe " + tok, true},
		{"a client's Re: and case", "Subject: Re: UNSUBSCRIBE " + strings.ToUpper(tok), true},
		{"RFC 2047 encoded subject", "Subject: =?utf-8?q?unsubscribe_" + tok + "?=", true},
		{"sub-address in To", "To: Sales <sdr01+u." + tok + "@acme.test>\r\nSubject: hi", true},
		{"sub-address in Delivered-To", "Delivered-To: sdr01+u." + tok + "@acme.test\r\nSubject: hi", true},
		{"an ordinary reply", "Subject: Re: Quick question", false},
		{"a token too short", "Subject: unsubscribe " + tok[:39], false},
		{"a token run on", "Subject: unsubscribe " + tok + "x", false},
		{"the word without a token", "Subject: please unsubscribe me", false},
	} {
		msg, err := mail.ReadMessage(strings.NewReader(tc.headers + "\r\n\r\nbody\r\n"))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := unsubscribe.ParseMailtoRequest(msg.Header)
		if ok != tc.want || ok && got != tok {
			t.Errorf("%s: got %q, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
}
