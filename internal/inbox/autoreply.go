package inbox

import (
	"net/mail"
	"strings"
)

// isAutoReply recognises mail a machine sent: out-of-office and vacation
// answers, challenge-response systems, list and bulk mail. None of it is a
// person answering, so none ends a sequence as a reply would, whatever its
// words. The markers, any one of which is enough:
//   - Auto-Submitted other than "no" (RFC 3834);
//   - Precedence: auto_reply, bulk, junk or list (the de facto header
//     responders and list servers set, and RFC 3834 says to honour);
//   - X-Auto-Response-Suppress (Exchange sets it on what it generates),
//     X-Autoreply, X-Autorespond (common vacation responders);
//   - a null Return-Path (<>): only bounces and auto-responders are sent
//     with an empty envelope sender (RFC 5321 4.5.5, RFC 3834 3.3); a
//     delivery report has one too, and is read before this;
//   - List-Id or List-Unsubscribe (RFC 2919, RFC 2369): list traffic, not
//     a person's own reply.
func isAutoReply(h mail.Header) bool {
	if v := headerWord(h, "Auto-Submitted"); v != "" && v != "no" {
		return true
	}
	switch headerWord(h, "Precedence") {
	case "auto_reply", "bulk", "junk", "list":
		return true
	}
	for _, k := range []string{"X-Auto-Response-Suppress", "X-Autoreply", "X-Autorespond", "List-Id", "List-Unsubscribe"} {
		if strings.TrimSpace(h.Get(k)) != "" {
			return true
		}
	}
	return isNullPath(h["Return-Path"])
}

// headerWord is a header's first word, lower case ("auto-replied" of
// "Auto-Replied; owner-email=..."; RFC 3834 allows parameters).
func headerWord(h mail.Header, key string) string {
	v, _, _ := strings.Cut(h.Get(key), ";")
	return strings.ToLower(firstWord(v))
}

// isNullPath reports whether the topmost Return-Path (the one the final
// delivery added) is the null path <>.
func isNullPath(values []string) bool {
	if len(values) == 0 {
		return false
	}
	v := strings.TrimSpace(values[0])
	inner, ok := strings.CutPrefix(v, "<")
	if !ok {
		return false
	}
	inner, ok = strings.CutSuffix(inner, ">")
	return ok && strings.TrimSpace(inner) == ""
}
