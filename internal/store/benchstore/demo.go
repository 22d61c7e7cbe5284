package benchstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/benchstore/benchdb"
)

// The demo's reads and seeds: what `rindactl demo` shows while it runs and
// reports at its end, and the rows it stages between its acts.

// DemoStatus is the demo's live line: messages sent, leads by
// enrichment state.
type DemoStatus struct {
	Sent, Pending, Enriched, Unreachable int64
}

// DemoLiveStatus reads the demo's live line.
func DemoLiveStatus(ctx context.Context, db store.DBTX) (DemoStatus, error) {
	r, err := benchdb.New(db).DemoLiveStatus(ctx)
	return DemoStatus(r), err
}

// DemoStepsOverdue makes every active enrollment's next step two hours
// overdue, so the demo's first email tick has a backlog.
func DemoStepsOverdue(ctx context.Context, db store.DBTX) error {
	return benchdb.New(db).DemoStepsOverdue(ctx)
}

// DemoEnrichmentCount is a number of leads in one enrichment status,
// found by one provider (Source; "" unless enriched).
type DemoEnrichmentCount struct {
	Status, Source string
	Leads          int64
}

// DemoEnrichmentResults counts the leads by enrichment status and, for
// enriched ones, by the provider that found the address.
func DemoEnrichmentResults(ctx context.Context, db store.DBTX) ([]DemoEnrichmentCount, error) {
	rows, err := benchdb.New(db).DemoReportEnrichment(ctx)
	return store.ConvertRows(rows, err, "reading enrichment results", func(r benchdb.DemoReportEnrichmentRow) DemoEnrichmentCount {
		return DemoEnrichmentCount(r)
	})
}

// DemoSentByMailbox counts the messages sent per mailbox address of the
// workspace,
// mailboxes that sent none included.
func DemoSentByMailbox(ctx context.Context, db store.DBTX, workspace string) (map[string]int, error) {
	rows, err := benchdb.New(db).DemoReportSends(ctx, workspace)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Address] = int(r.Sent)
	}
	return out, nil
}

// DemoBreakerOpened is when findymail's breaker first opened; the zero
// time when it never did.
func DemoBreakerOpened(ctx context.Context, db store.DBTX) (time.Time, error) {
	t, err := benchdb.New(db).DemoReportBreakerOpened(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	return t, err
}

// DemoAdmittedBy counts the findymail calls admitted at or before at.
func DemoAdmittedBy(ctx context.Context, db store.DBTX, at time.Time) (int, error) {
	n, err := benchdb.New(db).DemoReportAdmittedBy(ctx, at)
	return int(n), err
}

// DemoSeedInboxLeads adds n leads with an address to workspace.
func DemoSeedInboxLeads(ctx context.Context, db store.DBTX, workspace string, n int) error {
	return benchdb.New(db).DemoInboxLeadsSeed(ctx, benchdb.DemoInboxLeadsSeedParams{Leads: int32(n), Workspace: workspace})
}

// DemoRamp is a ramping mailbox's cap today (nil: none) and how many
// enrollments it carries.
type DemoRamp struct {
	CapToday    *int32
	Enrollments int64
}

// DemoMailboxRamp reads the ramp of the mailbox at address.
func DemoMailboxRamp(ctx context.Context, db store.DBTX, address string) (DemoRamp, error) {
	r, err := benchdb.New(db).DemoInboxRamp(ctx, address)
	return DemoRamp(r), err
}

// DemoSend is one message a mailbox sent and its recipient's address
// (nil: the lead has none).
type DemoSend struct {
	MessageID string
	Email     *string
}

// DemoFirstSends are the first two messages the mailbox at address sent.
func DemoFirstSends(ctx context.Context, db store.DBTX, address string) ([]DemoSend, error) {
	rows, err := benchdb.New(db).DemoInboxSent(ctx, address)
	return store.ConvertRows(rows, err, "reading the mailbox's sends", func(r benchdb.DemoInboxSentRow) DemoSend { return DemoSend(r) })
}

// DemoReplyOutcome is what the inbox tick made of a reply and a bounce:
// their enrollments' statuses, and whether the bounced address is
// suppressed.
type DemoReplyOutcome struct {
	ReplyStatus, BounceStatus string
	Suppressed                bool
}

// DemoInboxOutcome reads the outcome for the leads at replyEmail and
// bounceEmail.
func DemoInboxOutcome(ctx context.Context, db store.DBTX, replyEmail, bounceEmail string) (DemoReplyOutcome, error) {
	r, err := benchdb.New(db).DemoInboxOutcome(ctx, benchdb.DemoInboxOutcomeParams{ReplyEmail: replyEmail, BounceEmail: bounceEmail})
	return DemoReplyOutcome(r), err
}
