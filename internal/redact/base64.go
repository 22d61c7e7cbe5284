package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
)

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
