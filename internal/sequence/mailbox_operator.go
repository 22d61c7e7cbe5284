package sequence

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/opsfilter"
	"github.com/rindactl/rindactl/internal/store"
)

// FindMailbox finds the one mailbox with this address (any case), in the
// named workspace when workspace is set. No such mailbox, or one address
// in several workspaces without --workspace, is an *opsfilter.Error whose
// message names the fix.
func FindMailbox(ctx context.Context, db store.DBTX, address, workspace string) (store.OpsMailboxState, error) {
	workspaceID, _, err := opsfilter.Resolve(ctx, db, workspace, "")
	if err != nil {
		return store.OpsMailboxState{}, err
	}
	found, err := store.OpsFindMailboxes(ctx, db, address, workspaceID)
	if err != nil {
		return store.OpsMailboxState{}, err
	}
	switch len(found) {
	case 0:
		return store.OpsMailboxState{}, &opsfilter.Error{Msg: fmt.Sprintf("no mailbox %q (see 'rindactl mailbox list'; import its campaign with 'rindactl import campaign FILE.yaml')", address)}
	case 1:
		return found[0], nil
	}
	var where []string
	for _, m := range found {
		where = append(where, m.Workspace)
	}
	return store.OpsMailboxState{}, &opsfilter.Error{Msg: fmt.Sprintf("mailbox %q is in %d workspaces (%s): add --workspace", address, len(found), strings.Join(where, ", "))}
}

// MailboxTarget names one mailbox the way an operator does. Its actions
// run in their own transaction with their audit-log row, so no hand-made
// pause or resume goes unrecorded.
type MailboxTarget struct {
	Address   string
	Workspace string
}

// MailboxChange is what an operator's action did to a mailbox.
type MailboxChange struct {
	Mailbox store.OpsMailboxState
	// Before is the pause it replaced (Until nil: it was not paused, or its
	// pause had already ended).
	Before store.MailboxPause
}

// ManualPauseReasonPrefix starts the reason of every pause an operator made,
// so status, why and the audit log tell it from the ticks' own pauses.
const ManualPauseReasonPrefix = "paused by "

// Pause stops every tick from claiming the mailbox's rows until now+d:
// the rows wait (step 1 may move to another mailbox, as for any pause).
func (t MailboxTarget) Pause(ctx context.Context, pool *pgxpool.Pool, now time.Time, d time.Duration, reason, actor string) (MailboxChange, time.Time, error) {
	until := now.Add(d)
	why := ManualPauseReasonPrefix + actor
	if reason != "" {
		why += ": " + reason
	}
	c, err := t.change(ctx, pool, "mailbox.pause", actor, &until, why, map[string]any{"for": d.String(), "reason": reason})
	return c, until, err
}

// Resume clears the mailbox's pause, whoever set it (a tick's bounce-rate
// guard, a refused login, an operator): the next email tick claims its
// rows again. A guard whose cause is still there pauses it again.
func (t MailboxTarget) Resume(ctx context.Context, pool *pgxpool.Pool, actor string) (MailboxChange, error) {
	return t.change(ctx, pool, "mailbox.resume", actor, nil, "", nil)
}

func (t MailboxTarget) change(ctx context.Context, pool *pgxpool.Pool, action, actor string, until *time.Time, reason string, extra map[string]any) (MailboxChange, error) {
	var c MailboxChange
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		m, err := FindMailbox(ctx, tx, t.Address, t.Workspace)
		if err != nil {
			return err
		}
		before, err := store.SetMailboxPause(ctx, tx, m.ID, until, reason)
		if err != nil {
			return err
		}
		c = MailboxChange{Mailbox: m, Before: before}
		filters := map[string]any{"workspace": m.Workspace, "address": m.Address, "previous_reason": before.Reason}
		if before.Until != nil {
			filters["previous_until"] = before.Until.UTC().Format(time.RFC3339)
		}
		for k, v := range extra {
			filters[k] = v
		}
		_, err = store.InsertAudit(ctx, tx, store.Audit{Actor: actor, Action: action, Filters: filters, Affected: 1})
		return err
	})
	return c, err
}
