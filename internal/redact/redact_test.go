package redact_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rindactl/rindactl/internal/redact"
)

// spellings are the forms a secret comes back in: echoed by a server, in a
// URL, in a JSON body, inside an AUTH PLAIN or AUTH LOGIN blob.
func spellings(user, secret string) map[string]string {
	j, _ := json.Marshal(secret)
	return map[string]string{
		"literal":       secret,
		"query escaped": url.QueryEscape(secret),
		"path escaped":  url.PathEscape(secret),
		"lower hex":     lowerHex(url.QueryEscape(secret)),
		"json":          string(j[1 : len(j)-1]),
		"json slashes":  strings.ReplaceAll(string(j[1:len(j)-1]), "/", `\/`),
		"auth plain":    base64.StdEncoding.EncodeToString([]byte("\x00" + user + "\x00" + secret)),
		"auth plain 2":  base64.StdEncoding.EncodeToString([]byte(user + "\x00" + user + "\x00" + secret)),
		"auth login":    base64.StdEncoding.EncodeToString([]byte(secret)),
		"url base64":    base64.RawURLEncoding.EncodeToString([]byte("x" + secret)),
	}
}

func TestStringHidesEveryForm(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"pa/ss+wo=rd&key", "s3cr3t-With Space", "ключ/пароль+=", `quo"te\back<>`} {
		for name, form := range spellings("sdr01@acme.test", secret) {
			text := "535 5.7.8 Error: authentication failed: " + form + " (was it right?)"
			got := redact.String(text, secret)
			if leaks(got, secret) {
				t.Errorf("%q in its %s form: %q still carries it", secret, name, got)
			}
			if !strings.Contains(got, redact.Marker) || !strings.HasPrefix(got, "535 5.7.8 Error") {
				t.Errorf("%s form: %q, want the reply kept and the secret marked", name, got)
			}
		}
	}
}

// leaks reports whether text holds the secret in any of its forms.
func leaks(text, secret string) bool {
	for _, f := range spellings("u", secret) {
		if strings.Contains(text, f) {
			return true
		}
	}
	b := base64.StdEncoding.EncodeToString([]byte(secret))
	return strings.Contains(text, b[:len(b)-4])
}

func TestStringRegistryAndPatterns(t *testing.T) {
	// Not parallel: it registers a secret process-wide.
	secret := "registered-" + strings.Repeat("k", 12)
	redact.Register(secret, "abc") // too short to hide: ignored
	cases := map[string]string{
		"the key " + secret + " was refused":                       "the key [redacted] was refused",
		"GET /v2/find?api_key=anything&domain=x":                   "GET /v2/find?api_key=[redacted]&domain=x",
		"push to http://pg:9091/metrics?token=t0k3n: 401":          "push to http://pg:9091/metrics?token=[redacted] 401",
		"dial postgres://role:hunter2@127.0.0.1:5432/db: refused":  "dial postgres://role:[redacted]@127.0.0.1:5432/db: refused",
		`{"password": "x y", "user": "abc"}`:                       `{"password": "[redacted] y", "user": "abc"}`,
		"Authorization: Bearer abc.def":                            "Authorization: Bearer [redacted]",
		"smtp://sdr01@mail.example:587 has no password: fine, abc": "smtp://sdr01@mail.example:587 has no password: fine, abc",
	}
	for in, want := range cases {
		if got := redact.String(in); got != want {
			t.Errorf("String(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

func TestErrorKeepsIsButNotTheText(t *testing.T) {
	t.Parallel()
	inner := errors.Join(os.ErrDeadlineExceeded, errors.New("535 bad password hunter2hunter2"))
	err := redact.Error(inner, "hunter2hunter2")
	if strings.Contains(err.Error(), "hunter2") || !errors.Is(err, os.ErrDeadlineExceeded) || errors.Unwrap(err) != nil {
		t.Errorf("redact.Error = %q (Is deadline: %v, Unwrap %v)", err, errors.Is(err, os.ErrDeadlineExceeded), errors.Unwrap(err))
	}
}

func TestHandlerRedactsLogLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	secret := "log-secret-" + strings.Repeat("z", 8)
	redact.Register(secret)
	log := slog.New(redact.Handler(slog.NewJSONHandler(&buf, nil))).With("url", "http://u:"+secret+"@h/")
	log.Warn("failed with "+secret, "error", errors.New("535 "+base64.StdEncoding.EncodeToString([]byte("\x00u\x00"+secret))),
		slog.Group("g", "k", url.QueryEscape(secret)), "huge", strings.Repeat("x", 10_000),
		"nil time", (*time.Time)(nil), "nil error", (*url.Error)(nil))
	if leaks(buf.String(), secret) {
		t.Errorf("log line carries the secret: %s", buf.String())
	}
	if buf.Len() > 8_000 {
		t.Errorf("log line is %d bytes: a value is not clipped", buf.Len())
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 3000)
	got := redact.Clip(long, redact.StoredMax)
	if len(got) > redact.StoredMax || !utf8.ValidString(got) || !strings.HasSuffix(got, "bytes, cut]") {
		t.Errorf("Clip gave %d bytes (valid %v): …%s", len(got), utf8.ValidString(got), got[len(got)-30:])
	}
	if redact.Clip("short", 10) != "short" || len(redact.Clip(long, 5)) > 5 {
		t.Error("Clip changed a short text or overran a tiny bound")
	}
}

// FuzzString: whatever surrounds a secret, in whatever form, none of its
// forms survives, and the text around is kept.
func FuzzString(f *testing.F) {
	f.Add("pa/ss+wo=rd", "535 ", " failed", uint8(0))
	f.Add("k3y/with+plus=", "GET /?key=", "&x=1", uint8(1))
	f.Add("zoë-pässwörd", `{"error":"`, `"}`, uint8(4))
	f.Add("abcdefgh", "AUTH ", "", uint8(6))
	f.Add("xxxxxxxx", "xxxx", "xxxx", uint8(8))
	f.Fuzz(func(t *testing.T, secret, prefix, suffix string, which uint8) {
		if len(secret) < redact.MinSecretLen || strings.ContainsAny(secret, "[]") || strings.Contains(redact.Marker, secret) {
			return // the marker itself could spell it
		}
		forms := spellings("user", secret)
		names := make([]string, 0, len(forms))
		for n := range forms {
			names = append(names, n)
		}
		// Map iteration order is random: pick by sorted name.
		slicesSort(names)
		form := forms[names[int(which)%len(names)]]
		got := redact.String(prefix+form+suffix, secret)
		if strings.Contains(got, secret) {
			t.Fatalf("secret %q survives in %q", secret, got)
		}
		for name, f := range forms {
			if len(f) >= 8 && strings.Contains(got, f) && !strings.Contains(redact.Marker, f) {
				t.Fatalf("the %s form %q survives in %q", name, f, got)
			}
		}
	})
}

func lowerHex(s string) string {
	return regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(s, strings.ToLower)
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
