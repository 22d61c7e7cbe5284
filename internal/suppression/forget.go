package suppression

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/store"
)

// ForgetRequest names the person to forget.
type ForgetRequest struct {
	// Email is their address, in any spelling address.Canonical accepts.
	Email string
	// Workspace limits the erasure to one workspace; empty: every
	// workspace that holds the address.
	Workspace string
	// Actor is who asked, for the audit row.
	Actor string
}

// ForgetResult is what Forget erased; it names the address only by hash.
type ForgetResult struct {
	EmailSHA256 string `json:"email_sha256"`
	// Workspaces are the workspaces where the address is now suppressed by
	// its hash alone.
	Workspaces  []string `json:"workspaces"`
	Leads       int64    `json:"leads"`
	Enrollments int64    `json:"enrollments"`
	// Recipients are campaign_recipients rows ("this campaign mailed it").
	Recipients int64 `json:"campaign_recipients"`
	// Suppressions are rows that held the address, now only its hash.
	Suppressions int64 `json:"suppressions_hashed"`
	// Scrubbed counts events, pause reasons and errors the address was
	// cut out of.
	Scrubbed int64 `json:"scrubbed"`
	AuditID  int64 `json:"audit_id"`
}

// Forget erases a person's data, in one transaction: their leads (and with
// them enrollments, sends, enrichment rows and unsubscribe token uses), the
// campaigns' records of having mailed them, the address in suppressions,
// and the address wherever free text kept it (events, errors). What stays is
// the SHA-256 of the canonical address in suppressions, in every workspace
// that held it (or the one named), so the address is never mailed and never
// imported again, and an audit row that names it by that hash. Sends
// erased no longer count toward a mailbox's daily cap or bounce figures.
func Forget(ctx context.Context, pool *pgxpool.Pool, req ForgetRequest) (ForgetResult, error) {
	canonical, err := address.Canonical(req.Email)
	if err != nil {
		return ForgetResult{}, err
	}
	hash := Hash(canonical)
	res := ForgetResult{EmailSHA256: HashHex(canonical), Workspaces: []string{}}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var only *int64
		var ids []int64
		if req.Workspace != "" {
			id, err := store.WorkspaceID(ctx, tx, req.Workspace)
			if err != nil {
				return err
			}
			only, ids = &id, []int64{id}
		}
		spellings := Spellings(req.Email, canonical)
		leads, err := store.ForgetLeads(ctx, tx, spellings, only)
		if err != nil {
			return err
		}
		for _, l := range leads {
			res.Leads += l.Leads
			res.Enrollments += l.Enrollments
			ids = append(ids, l.WorkspaceID)
		}
		recipients, err := store.ForgetRecipients(ctx, tx, spellings, only)
		if err != nil {
			return err
		}
		res.Recipients = int64(len(recipients))
		suppressed, err := store.ForgetSuppressedAddresses(ctx, tx, hash, only)
		if err != nil {
			return err
		}
		res.Suppressions = int64(len(suppressed))
		ids = append(append(ids, recipients...), suppressed...)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		kept := make([]store.Suppression, len(ids))
		for i, id := range ids {
			kept[i] = store.Suppression{WorkspaceID: id, SHA256: hash, Reason: ReasonForgotten}
		}
		if _, err := store.Suppress(ctx, tx, kept); err != nil {
			return err
		}
		if res.Scrubbed, err = store.ScrubText(ctx, tx, literalAlternatives(spellings)); err != nil {
			return err
		}
		if res.Workspaces, err = store.WorkspaceNames(ctx, tx, ids); err != nil {
			return err
		}
		res.AuditID, err = store.InsertAudit(ctx, tx, store.Audit{Actor: req.Actor, Action: "lead.forget", Filters: map[string]any{"email_sha256": res.EmailSHA256, "workspace": req.Workspace, "workspaces": res.Workspaces}, Affected: res.Leads})
		return err
	})
	if err != nil {
		return ForgetResult{}, fmt.Errorf("forgetting an address: %w", err)
	}
	return res, nil
}

// literalAlternatives is a regular expression (Postgres ARE) matching any
// of the strings literally.
func literalAlternatives(ss []string) string {
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = regexp.QuoteMeta(s)
	}
	return "(" + strings.Join(quoted, "|") + ")"
}
