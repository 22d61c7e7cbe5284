package redact

import (
	"context"
	"log/slog"
)

// Handler wraps a slog handler so that no log line carries a secret: the
// message passes through String, and every string, error or stringer
// attribute through Stored.
func Handler(h slog.Handler) slog.Handler { return &handler{h} }

type handler struct{ next slog.Handler }

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = attr(a)
	}
	return &handler{h.next.WithAttrs(clean)}
}

func (h *handler) WithGroup(name string) slog.Handler { return &handler{h.next.WithGroup(name)} }

func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Stored(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		var text func() string
		switch x := v.Any().(type) {
		case error:
			text = x.Error
		case interface{ String() string }:
			text = x.String
		}
		if s, ok := call(text); ok {
			return slog.String(a.Key, Stored(s))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// call runs text, false when there is none or it panics (a nil pointer
// behind the interface, as a nil *time.Time): the value is then logged as
// the handler below would have logged it.
func call(text func() string) (s string, ok bool) {
	if text == nil {
		return "", false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return text(), true
}
