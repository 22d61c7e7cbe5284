// Package redact hides secrets in text before anyone sees it: logs, stored
// errors and reasons, events, status and why output, metrics errors. One
// function, String, serves every place, and it hides each secret in every
// encoding a server, a library or a log line may give it back: literal,
// percent-encoded (any hex case, + or %20 for a space, any bytes escaped),
// JSON-escaped (\uXXXX included), HTML references (named, decimal, hex),
// quoted-printable (soft line breaks included), and base64 or base64url at
// any alignment, padded or not (AUTH PLAIN sends "\x00user\x00password" in
// one blob, AUTH LOGIN the password alone), besides credential-looking
// key=value pairs and URL passwords it was never told about.
//
// Secrets are registered once, in their raw bytes. Each escaping encoding
// present in a text is decoded into a view that remembers, for each
// decoded byte, the span of the original it came from; secrets are looked
// for in each view and the original spans masked (views.go, decode.go).
package redact

import (
	"encoding/base64"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
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
	text = hide(text, forms, all)
	text = userinfoPattern.ReplaceAllString(text, "${1}"+Marker+"@")
	return credentialPattern.ReplaceAllString(text, "${1}"+Marker)
}

// Contains reports whether text holds secret in any form String hides.
func Contains(text, secret string) bool {
	if len(secret) < MinSecretLen {
		return secret != "" && strings.Contains(text, secret)
	}
	return hide(text, formsOf(secret), []string{secret}) != text
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

// formsOf lists the spellings of one secret looked for in each view: the
// secret itself and the base64 pieces that encode it whatever surrounds it
// (the escaping encodings are decoded instead, views.go).
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
	// A secret that is not UTF-8 comes back from a JSON encoder with each
	// bad byte as U+FFFD: its other bytes are still the secret.
	add(replaceInvalidUTF8(s), false)
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

// replaceInvalidUTF8 replaces each byte that is not part of a UTF-8
// character with U+FFFD, as encoding/json does.
func replaceInvalidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			sb.WriteString("\uFFFD")
		} else {
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	return sb.String()
}

// sortForms puts longer forms first, so a span is as wide as the longest
// spelling found.
func sortForms(forms []form) {
	slices.SortStableFunc(forms, func(a, b form) int { return len(b.s) - len(a.s) })
}
