package redact

import (
	"slices"
	"strings"
)

type span struct{ from, to int }

// view is text as one encoding reads it: the decoded bytes, and for each
// the span of the original text it was decoded from, so that a secret
// found in the view masks exactly the escapes that spell it.
type view struct {
	text     string
	from, to []int32 // nil: the original text itself
	// fold maps a decoded byte that the encoding makes ambiguous onto
	// one spelling, in the view and in the secret alike ('+' and ' ' in
	// a query; '_' and ' ' in a quoted-printable header): an ambiguous
	// byte is hidden either way.
	fold func(byte) byte
}

// original is the span of the original text that view bytes [a, b) came
// from.
func (v *view) original(a, b int) span {
	if v.from == nil {
		return span{a, b}
	}
	return span{int(v.from[a]), int(v.to[b-1])}
}

// views are the readings of text: itself, then each escaping encoding it
// holds at least one escape of, and each encoding inside one of those (an
// HTML reference in a JSON string, a percent-encoded URL in a JSON body,
// a percent escape encoded twice).
func views(text string) []*view {
	out := []*view{{text: text}}
	for i, decode := range decoders {
		v := decode(text)
		if v == nil {
			continue
		}
		out = append(out, v)
		if v.from == nil {
			continue // the text itself, folded: its encodings are read above
		}
		for j, inner := range decoders {
			w := inner(v.text)
			// The same encoding's folded reading of v's text is v itself
			// (each decoder folds its own escapes' text the same way).
			if w != nil && !(j == i && w.from == nil) {
				out = append(out, v.compose(w))
			}
		}
	}
	return out
}

// compose is inner, a view of v's text, as a view of the original text.
func (v *view) compose(inner *view) *view {
	if inner.from == nil { // v's text itself, folded
		return &view{text: inner.text, from: v.from, to: v.to, fold: inner.fold}
	}
	from, to := make([]int32, len(inner.text)), make([]int32, len(inner.text))
	for k := range from {
		from[k], to[k] = v.from[inner.from[k]], v.to[inner.to[k]-1]
	}
	return &view{text: inner.text, from: from, to: to, fold: inner.fold}
}

// find returns the original spans of every form (overlapping ones
// included) and of every base64 run decoding to a secret, in v.
func (v *view) find(text string, forms []form, secrets []string) []span {
	spans := base64Blobs(v.text, secrets)
	for i := range spans {
		spans[i] = v.original(spans[i].from, spans[i].to)
	}
	folded := v.text
	if v.fold != nil {
		folded = mapBytes(v.text, v.fold)
	}
	spans = append(spans, v.swallowed(text, folded, secrets)...)
	for _, f := range forms {
		hay, needle := v.text, f.s
		if !f.base64 && v.fold != nil {
			hay, needle = folded, mapBytes(f.s, v.fold)
		}
		for from := 0; from < len(hay); {
			i := strings.Index(hay[from:], needle)
			if i < 0 {
				break
			}
			sp := span{from + i, from + i + len(needle)}
			if f.base64 {
				sp = base64Run(v.text, sp)
			}
			spans = append(spans, v.original(sp.from, sp.to))
			from += i + 1
		}
	}
	return spans
}

// swallowed finds a secret whose first characters the text before it
// turned into an escape: in "%" + "00%21%21" ("00!!" percent-encoded) a
// reader takes "%00" for one escape, and the form starting inside it is
// never read whole. For each escape of v, the original characters after
// its escape character, followed by what v decoded after it, are read
// as well (folded like the view). text is the original v maps into.
func (v *view) swallowed(text, folded string, secrets []string) []span {
	if v.from == nil {
		return nil
	}
	fold := func(s string) string { return s }
	if v.fold != nil {
		fold = func(s string) string { return mapBytes(s, v.fold) }
	}
	secs := make([]string, len(secrets))
	for i, sec := range secrets {
		secs[i] = fold(sec)
	}
	var spans []span
	for p := 0; p < len(v.text); {
		a, b := int(v.from[p]), int(v.to[p])
		q := p + 1 // the escape's decoded bytes are [p, q)
		for q < len(v.text) && int(v.from[q]) == a {
			q++
		}
		for k := a + 1; k < b; k++ {
			lit := fold(text[k:b])
			for _, sec := range secs {
				if len(sec) > len(lit) && strings.HasPrefix(sec, lit) && strings.HasPrefix(folded[q:], sec[len(lit):]) {
					spans = append(spans, span{k, v.original(q, q+len(sec)-len(lit)).to})
				}
			}
		}
		p = q
	}
	return spans
}

func mapBytes(s string, f func(byte) byte) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = f(c)
	}
	return string(b)
}

// hide replaces every span where any view finds a form or a secret with
// Marker; overlapping and touching spans become one.
func hide(text string, forms []form, secrets []string) string {
	var spans []span
	for _, v := range views(text) {
		spans = append(spans, v.find(text, forms, secrets)...)
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

// viewBuilder writes a view byte by byte.
type viewBuilder struct {
	b        []byte
	from, to []int32
	held     int // start of escapes that decode to nothing (a soft line break), -1: none
}

func newViewBuilder(n int) *viewBuilder {
	return &viewBuilder{b: make([]byte, 0, n), from: make([]int32, 0, n), to: make([]int32, 0, n), held: -1}
}

// add appends decoded, which original bytes [from, to) spell.
func (w *viewBuilder) add(decoded string, from, to int) {
	if w.held >= 0 {
		from, w.held = w.held, -1
	}
	for i := 0; i < len(decoded); i++ {
		w.b = append(w.b, decoded[i])
		w.from = append(w.from, int32(from))
		w.to = append(w.to, int32(to))
	}
}

// hold notes original bytes from on that decode to nothing: they belong
// to the next decoded byte's span.
func (w *viewBuilder) hold(from int) {
	if w.held < 0 {
		w.held = from
	}
}

func (w *viewBuilder) view(fold func(byte) byte) *view {
	return &view{text: string(w.b), from: w.from, to: w.to, fold: fold}
}
