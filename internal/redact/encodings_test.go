package redact_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/redact/redacttest"
)

// Issue 37, finding 5: a secret came back through the redactor spelled
// with %20 or every byte percent-encoded, as JSON \uXXXX, as HTML
// entities; quoted-printable and base64url were not read either. Each
// spelling, amid a server's reply, is hidden and the reply kept.
func TestStringHidesEveryEncoding(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"pa/ss+wo=rd&key", "s3cr3t With Space_x", "ключ/пароль+= ö", `quo"te\back<>;`, "emoji😀key#1"} {
		for name, spelling := range redacttest.Spellings("sdr01@acme.test", secret) {
			for _, around := range [][2]string{{"535 5.7.8 Error: ", " (was it right?)"}, {`{"error":"bad key `, `"}`}, {"x", "y"}} {
				text := around[0] + spelling + around[1]
				got := redact.String(text, secret)
				if enc := redacttest.Leaks(got, secret); enc != "" {
					t.Errorf("%q spelled %s (%q): %q still spells it in %s", secret, name, spelling, got, enc)
				}
				// Base64 characters around a blob are hidden with it.
				if !strings.Contains(got, redact.Marker) || !strings.HasPrefix(got, around[0]) && around[0] != "x" {
					t.Errorf("%s: %q, want the text around kept and the secret marked", name, got)
				}
			}
		}
	}
}

// The quoted-printable soft line break may fall anywhere in the secret,
// and the JSON escapes may mix with plain characters: partial encodings.
func TestStringHidesPartialEncodings(t *testing.T) {
	t.Parallel()
	const secret = "hunter2 Pass/word=ok"
	for _, text := range []string{
		"pass hunter2%20Pass%2fword%3Dok",
		"pass hunter2+Pass/word%3dok",
		"q=hunter2=20Pass/wor=\r\nd=3Dok",
		"q=hunter2_Pass=2Fw=\nord=3Dok",
		`"hunter2 Pass\/word\u003dok"`,
		`"\u0068unter2\u0020Pass/word=ok"`,
		"<b>hunter2&#32;Pass&sol;word&#x3d;ok</b>",
		"<b>hunter2 Pass&#47;word&equals;ok</b>",
		// One encoding inside another: HTML references in a JSON string,
		// a percent escape encoded twice.
		`{"m":"hunter2\u0026#32;Pass\u0026sol;word=ok"}`,
		"next=hunter2%2520Pass%252Fword%253Dok",
	} {
		if got := redact.String(text, secret); redacttest.Leaks(got, secret) != "" || !strings.Contains(got, redact.Marker) || strings.Contains(got, "Pass") {
			t.Errorf("String(%q) = %q: the secret is not hidden", text, got)
		}
	}
}

// An encoded word whose text needed no =XX spells each space '_' and
// nothing else: the '_' alone is the encoding.
func TestStringHidesUnderscoreOnlyEncodedWord(t *testing.T) {
	t.Parallel()
	const secret = "hunter2 Pass word"
	got := redact.String("Subject: =?utf-8?Q?hunter2_Pass_word?= ok", secret)
	if strings.Contains(got, "Pass") || !strings.Contains(got, redact.Marker) {
		t.Errorf("got %q: the secret is not hidden", got)
	}
}

// The text before a form may end in an escape character that takes the
// form's first characters into an escape of its own ("100%" before
// "ab%2Fcd" reads "%ab"): the form is still found.
func TestStringHidesAFormAnEscapeSwallowed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ secret, text string }{
		{"ab/cd ef", "done 100%ab%2Fcd%20ef!"},
		{"00!!xyz", "q=%00%21%21xyz"},
		{"00!!xyz", "q=%000%21%21xyz"}, // "%0" before: the escape takes one character
		{"4Fun=key", "Subject: x=4Fun=3Dkey"},
		{"#65;ab<cd", "<p>&#65;ab&lt;cd</p>"},
	} {
		got := redact.String(c.text, c.secret)
		if !strings.Contains(got, redact.Marker) || strings.Contains(got, "xyz") || strings.Contains(got, "key") || strings.Contains(got, "cd") {
			t.Errorf("String(%q) = %q: the secret %q is not hidden", c.text, got, c.secret)
		}
	}
}

// Registered secrets are found in every encoding too, without being named
// at the call.
func TestRegisteredSecretInEveryEncoding(t *testing.T) {
	t.Parallel()
	secret := "registered/" + strings.Repeat("Q", 6) + " +=&"
	redact.Register(secret)
	for name, spelling := range redacttest.Spellings("u", secret) {
		if got := redact.String("echo " + spelling + " end"); redacttest.Leaks(got, secret) != "" {
			t.Errorf("%s: %q", name, got)
		}
	}
}

// Text without any escape is left alone: the views are built only where
// there is something to decode, and ordinary text is never marked.
func TestStringLeavesPlainTextAlone(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"535 5.7.8 Authentication failed (100% sure, a+b, x=3D, &amp; co, \\u0041)",
		"=\r\n", "%", "&#", `\u12`, "&#x;", "=4", "%4",
	} {
		if got := redact.String(text, "not-in-there"); got != text {
			t.Errorf("String(%q) = %q, want it unchanged", text, got)
		}
	}
}

// FuzzEncodings: a random secret in random text, spelled in a random
// encoding (random hex case, a random part of its bytes escaped, random
// soft breaks, a random base64 alignment and padding), never survives:
// decoded from the output by the same encoding, the secret is not there.
func FuzzEncodings(f *testing.F) {
	f.Add("pa/ss+wo=rd", "535 ", " failed", uint8(1), uint64(1))
	f.Add("s3cr3t With Space", `{"error":"`, `"}`, uint8(2), uint64(2))
	f.Add("zoë-pässwörd&<>", "<p>", "</p>", uint8(3), uint64(3))
	f.Add("key=value_x y", "Subject: =?utf-8?Q?", "?=", uint8(4), uint64(4))
	f.Add("abcdefgh", "AUTH PLAIN ", "", uint8(5), uint64(5))
	f.Add("😀ключ/+", "token ", "==", uint8(6), uint64(6))
	// Found by CI's fuzzer: quoted-printable with every space as '_' and
	// no =XX anywhere (an encoded word that needed no escape).
	f.Add("0 0 ", "0", "0", uint8(4), uint64(42))
	f.Fuzz(func(t *testing.T, secret, prefix, suffix string, which uint8, seed uint64) {
		if len(secret) < redact.MinSecretLen || len(secret) > 64 || strings.ContainsAny(secret, "[]") {
			return // the marker itself could spell it
		}
		enc := redacttest.Encodings[int(which)%len(redacttest.Encodings)]
		r := rand.New(rand.NewPCG(seed, uint64(which)))
		spelling := redacttest.Encode(enc, secret, r)
		got := redact.String(prefix+spelling+suffix, secret)
		if leak := redacttest.Leaks(got, secret); leak != "" {
			t.Fatalf("secret %q spelled %s as %q survives in %q (read as %s)", secret, enc, spelling, got, leak)
		}
	})
}

// BenchmarkString is the hot path: every log line passes through it. A
// plain line builds no decoded view; a line with escapes builds one per
// encoding it holds (and one per encoding inside those).
func BenchmarkString(b *testing.B) {
	redact.Register("bench-secret/with+plus= and space")
	for name, line := range map[string]string{
		"plain":   `msg="email tick finished" mailbox=sdr01@acme.test sent=120 failed=0 duration_ms=5123 tick_id=vm:1234:abcd`,
		"escapes": `msg="provider answered" body="{\"error\":\"invalid key\",\"url\":\"/v2/find?domain=acme%2Etest&first=J%C3%B6rg\"}" page="&lt;b&gt;no&lt;/b&gt;"`,
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				redact.String(line)
			}
		})
	}
}
