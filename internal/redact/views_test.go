package redact

import "testing"

// A text without an escape of any encoding is read once, as itself: the
// hot path of a log line decodes nothing ('=' before a word, a lone '%' or
// '&' are no escapes; "sent=120" does read as quoted-printable "=12", and
// "C:\temp" as JSON "\t": such lines are decoded, as they must be).
func TestPlainTextBuildsNoView(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		`level=INFO msg="email tick finished" mailbox=sdr01@acme.test ratio 100%`,
		`Tom & Jerry; C:/temp/x; a=b; =G; &#; &x y; \x`,
	} {
		if n := len(views(text)); n != 1 {
			t.Errorf("%q: %d views, want the text alone", text, n)
		}
	}
	if n := len(views("x=3D%41&amp;\\u0041")); n < 5 {
		t.Errorf("a text with an escape of each encoding: %d views, want one per encoding and the text", n)
	}
}
