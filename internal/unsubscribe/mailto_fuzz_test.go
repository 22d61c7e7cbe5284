package unsubscribe_test

import (
	"bytes"
	"mime"
	"net/mail"
	"net/url"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// FuzzParseMailtoRequest feeds `inbox tick`'s recognition of a
// List-Unsubscribe mailto: message any Subject and recipient. It never
// panics; a token it returns is one a Sign could have made (40 characters
// of a-z2-7, lower case) and was in the message; and a message sent the
// way a client follows our mailto: URL (the subject it sets, as is or
// RFC 2047 encoded, after a Re:) always yields its token.
func FuzzParseMailtoRequest(f *testing.F) {
	key := bytes.Repeat([]byte{7}, unsubscribe.KeySize)
	tok := unsubscribe.Sign(key, 42)
	for _, seed := range []struct {
		subject, to string
		id          int64
	}{
		{"unsubscribe " + tok, "sdr01@acme.test", 1},
		{"Re: UNSUBSCRIBE " + strings.ToUpper(tok), "", 2},
		{"=?utf-8?q?unsubscribe_" + tok + "?=", "", 3},
		{"=?utf-8?b?dW5zdWJzY3JpYmUg?=", "Sales <sdr01+u." + tok + "@acme.test>", 4},
		{"unsubscribe " + tok[:39], "sdr01+u." + tok[:39] + "@acme.test", 5},
		{"unsubscribe " + tok + "x", "sdr01+u." + tok + "x@acme.test", -1},
		{"please unsubscribe me", "", 0},
		{"=?iso-8859-1?q?unsubscribe=A0" + tok + "?=", "\u202e@x", 1 << 62},
		{"unsubscribe\t" + tok + "\x00", "sdr01+U." + strings.ToUpper(tok) + "@ACME.test", 9},
	} {
		f.Add(seed.subject, seed.to, seed.id)
	}
	f.Fuzz(func(t *testing.T, subject, to string, id int64) {
		h := mail.Header{"Subject": {subject}, "To": {to}, "Delivered-To": {to}}
		got, ok := unsubscribe.ParseMailtoRequest(h)
		if ok {
			if len(got) != unsubscribe.TokenLen || strings.Trim(got, "abcdefghijklmnopqrstuvwxyz234567") != "" {
				t.Fatalf("token %q from subject %q, to %q", got, subject, to)
			}
			decoded, err := new(mime.WordDecoder).DecodeHeader(subject)
			if err != nil {
				decoded = subject
			}
			if !strings.Contains(strings.ToLower(decoded), got) && !strings.Contains(strings.ToLower(to), got) {
				t.Fatalf("token %q is in neither subject %q nor to %q", got, subject, to)
			}
		}

		own := unsubscribe.Sign(key, id)
		u, err := url.Parse(unsubscribe.MailtoURL("sdr01@acme.test", own))
		if err != nil {
			t.Fatalf("our mailto: URL does not parse: %v", err)
		}
		sent := u.Query().Get("subject")
		for _, s := range []string{sent, "Re: " + sent, "RE: " + strings.ToUpper(sent), mime.QEncoding.Encode("utf-8", sent), "Re: " + mime.BEncoding.Encode("utf-8", sent)} {
			if got, ok := unsubscribe.ParseMailtoRequest(mail.Header{"Subject": {s}, "To": {to}}); !ok || got != own {
				t.Fatalf("subject %q (to %q): %q %v, want %q", s, to, got, ok, own)
			}
		}
	})
}
