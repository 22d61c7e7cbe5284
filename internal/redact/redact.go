// Package redact hides secrets in text before anyone sees it: logs, stored
// errors and reasons, events, status and why output, metrics errors. One
// function, String, serves every place, and it hides each secret in every
// form a server, a library or a log line may give it back: literal,
// URL-encoded (query and path escaping, either hex case), JSON-escaped, and
// base64 at any alignment (AUTH PLAIN sends "\x00user\x00password" in one
// blob, AUTH LOGIN the password alone), besides credential-looking
// key=value pairs and URL passwords it was never told about.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Marker replaces every hidden secret.
const Marker = "[redacted]"

// MinSecretLen is the shortest secret hidden: shorter values would hide
// ordinary words everywhere and protect nothing.
const MinSecretLen = 4

// minBase64Form is the shortest base64 piece matched: shorter ones occur
// by chance in any base64 text.
const minBase64Form = 6

// form is one spelling of a secret to look for.
type form struct {
	s string
	// base64: a match hides the whole base64 run around it (what the
	// secret shares with its neighbours in the blob is secret too).
	base64 bool
}

var registry struct {
	mu      sync.RWMutex
	known   map[string]bool
	secrets []string
	forms   []form
}

// Register adds secrets every later String call hides, whoever calls it:
// the passwords, keys and tokens a process reads from its environment.
// Values shorter than MinSecretLen are ignored.
func Register(secrets ...string) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.known == nil {
		registry.known = map[string]bool{}
	}
	added := false
	for _, s := range secrets {
		if len(s) < MinSecretLen || registry.known[s] {
			continue
		}
		registry.known[s] = true
		registry.secrets = append(registry.secrets, s)
		registry.forms = append(registry.forms, formsOf(s)...)
		added = true
	}
	if added {
		sortForms(registry.forms)
	}
}

// String returns text with every registered secret and every one of
// secrets hidden in all their forms, and credential-looking values
// (password=…, token=…, Authorization: Bearer …, a URL's password) hidden
// too.
func String(text string, secrets ...string) string {
	registry.mu.RLock()
	forms, all := registry.forms, registry.secrets
	registry.mu.RUnlock()
	var extra []form
	for _, s := range secrets {
		if len(s) >= MinSecretLen {
			extra = append(extra, formsOf(s)...)
			all = append(slices.Clip(all), s)
		}
	}
	if len(extra) > 0 {
		forms = append(slices.Clip(forms), extra...)
		sortForms(forms)
	}
	text = hideForms(text, forms, all)
	text = userinfoPattern.ReplaceAllString(text, "${1}"+Marker+"@")
	return credentialPattern.ReplaceAllString(text, "${1}"+Marker)
}

// Contains reports whether text holds secret in any form String hides.
func Contains(text, secret string) bool {
	if len(secret) < MinSecretLen {
		return secret != "" && strings.Contains(text, secret)
	}
	return hideForms(text, formsOf(secret), []string{secret}) != text
}

// Error returns err with its text passed through String; errors.Is still
// sees the original chain, but nothing can unwrap it to read its text.
func Error(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: String(err.Error(), secrets...), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

// Is lets errors.Is match the original chain (timeouts, context errors)
// without exposing it to errors.As or Unwrap.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

var (
	// credentialPattern: key=value pairs (a URL query, a form), "key":
	// "value" (a JSON echo) and Authorization headers that carry a
	// credential; "password: wrong" in a sentence stays readable.
	credentialPattern = regexp.MustCompile(`(?i)((?:api[_-]?key|apikey|access[_-]?token|token|secret|password|passwd|pwd)(?:\s*=\s*|["']\s*:\s*["']?)|authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic)\s+)?)[^\s&"',;<>\[\]]+`)
	// userinfoPattern: the password of scheme://user:password@host.
	userinfoPattern = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@\[\]]*:)[^@\s/\[\]]+@`)
)

// formsOf lists the spellings of one secret.
func formsOf(s string) []form {
	seen := map[string]bool{}
	var out []form
	add := func(f string, b64 bool) {
		if f == "" || seen[f] {
			return
		}
		seen[f] = true
		out = append(out, form{s: f, base64: b64})
	}
	add(s, false)
	for _, esc := range []string{url.QueryEscape(s), url.PathEscape(s)} {
		add(esc, false)
		add(lowerHexEscapes(esc), false)
	}
	for _, j := range jsonForms(s) {
		add(j, false)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		// The secret starts at any byte offset of the encoded blob; the
		// groups of three bytes wholly inside it encode the same way
		// whatever surrounds it.
		for skip := 0; skip < 3 && skip < len(s); skip++ {
			core := s[skip:]
			core = core[:len(core)/3*3]
			if f := enc.EncodeToString([]byte(core)); len(f) >= minBase64Form {
				add(f, true)
			}
		}
	}
	return out
}

// jsonForms: Go's encoder (HTML-safe or not) and the "\/" others write.
func jsonForms(s string) []string {
	b, _ := json.Marshal(s)
	htmlSafe := string(b[1 : len(b)-1])
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	plain := strings.TrimSuffix(sb.String(), "\n")
	plain = plain[1 : len(plain)-1]
	return []string{htmlSafe, plain, strings.ReplaceAll(plain, "/", `\/`), strings.ReplaceAll(htmlSafe, "/", `\/`)}
}

// lowerHexEscapes writes %2F as %2f: both are valid, encoders differ.
func lowerHexEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// sortForms puts longer forms first, so a span is as wide as the longest
// spelling found.
func sortForms(forms []form) {
	slices.SortStableFunc(forms, func(a, b form) int { return len(b.s) - len(a.s) })
}

type span struct{ from, to int }

// hideForms replaces every occurrence of every form (overlapping ones
// included), and every base64 run that decodes to text holding a secret,
// with Marker.
func hideForms(text string, forms []form, secrets []string) string {
	spans := base64Blobs(text, secrets)
	for _, f := range forms {
		for from := 0; from < len(text); {
			i := strings.Index(text[from:], f.s)
			if i < 0 {
				break
			}
			sp := span{from + i, from + i + len(f.s)}
			if f.base64 {
				sp = base64Run(text, sp)
			}
			spans = append(spans, sp)
			from += i + 1
		}
	}
	if len(spans) == 0 {
		return text
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	var sb strings.Builder
	at := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].from <= cur.to; i++ {
			cur.to = max(cur.to, spans[i].to)
		}
		sb.WriteString(text[at:cur.from])
		sb.WriteString(Marker)
		at = cur.to
	}
	sb.WriteString(text[at:])
	return sb.String()
}

// base64Blobs finds the base64 runs that decode to bytes holding one of
// secrets: an AUTH PLAIN or LOGIN blob echoed back, whatever the secret's
// length or offset in it. A run may start with neighbouring characters, so
// each of the four starting offsets is tried.
func base64Blobs(text string, secrets []string) []span {
	if len(secrets) == 0 {
		return nil
	}
	var spans []span
	for i := 0; i < len(text); {
		if !isBase64Char(text[i]) {
			i++
			continue
		}
		run := base64Run(text, span{i, i})
		if run.to-run.from >= 4 && decodesToSecret(text[run.from:run.to], secrets) {
			spans = append(spans, run)
		}
		i = run.to
	}
	return spans
}

// decodesToSecret: padding ends a blob, so a run such as "k=BLOB==x"
// holds several; each piece between padding is tried at each of the four
// starting offsets.
func decodesToSecret(run string, secrets []string) bool {
	for _, piece := range strings.FieldsFunc(run, func(r rune) bool { return r == '=' }) {
		for off := 0; off < 4 && off < len(piece); off++ {
			if pieceHoldsSecret(piece[off:], secrets) {
				return true
			}
		}
	}
	return false
}

// pieceHoldsSecret decodes blob in the standard alphabet with the URL
// one's two letters mapped onto it, so a blob of either alphabet decodes,
// and so does a run where a neighbour of the other alphabet touches it
// ("0eDAwMM_PMA+": the '+' would fail either decoding on its own).
func pieceHoldsSecret(blob string, secrets []string) bool {
	if len(blob)%4 == 1 {
		blob = blob[:len(blob)-1]
	}
	b, err := base64.RawStdEncoding.DecodeString(urlToStdAlphabet.Replace(blob))
	if err != nil {
		return false
	}
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

var urlToStdAlphabet = strings.NewReplacer("-", "+", "_", "/")

// base64Run widens sp to the run of base64 characters (either alphabet,
// padding included) it lies in.
func base64Run(text string, sp span) span {
	for sp.from > 0 && isBase64Char(text[sp.from-1]) {
		sp.from--
	}
	for sp.to < len(text) && isBase64Char(text[sp.to]) {
		sp.to++
	}
	return sp
}

func isBase64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_'
}
