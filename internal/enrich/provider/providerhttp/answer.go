package providerhttp

import (
	"log/slog"
	"strings"

	"github.com/rindactl/rindactl/internal/enrich"
)

// PlausibleEmail rejects a provider answer that cannot be an address, so
// garbage from a broken provider never becomes an enriched lead.
func PlausibleEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-1 && len(s) <= 254 && !strings.ContainsAny(s, " \t\r\n<>,;\"\\")
}

// LeadAttrs identify a lead in adapter log lines.
func LeadAttrs(l enrich.Lead) []slog.Attr {
	return []slog.Attr{slog.Int64("lead_id", l.ID), slog.Int64("workspace_id", l.WorkspaceID)}
}
