package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/inbox/imaptest"
	"github.com/rindactl/rindactl/internal/store/benchstore"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// The inbox act's names: its own workspace, so the incident's numbers stay
// its own.
const (
	inboxWorkspace   = "inbox-demo"
	inboxCampaign    = "warm-up"
	seasonedMailbox  = "seasoned@inbox-demo.example"
	freshMailbox     = "fresh@inbox-demo.example"
	inboxPasswordEnv = "RINDA_DEMO_IMAP_PASSWORD"
	// inboxLeads are split evenly over the two mailboxes by enroll.
	inboxLeads = 16
)

// InboxAct is the second part of the demo: a new mailbox held back by its
// warm-up ramp, and a reply and a bounce read over IMAP ending their
// sequences.
type InboxAct struct {
	// The fresh mailbox's ramp: its cap today, what it sent of what it
	// had due, and the established mailbox beside it.
	RampCapToday int `json:"ramp_cap_today"`
	RampDue      int `json:"ramp_due"`
	RampSent     int `json:"ramp_sent"`
	SeasonedSent int `json:"seasoned_sent"`
	// What `inbox tick` reported, and the enrollments it ended.
	Outcomes     map[string]int `json:"inbox_outcomes"`
	ReplyLead    string         `json:"reply_lead"`
	ReplyStatus  string         `json:"reply_status"`
	BounceLead   string         `json:"bounce_lead"`
	BounceStatus string         `json:"bounce_status"`
	Suppressed   bool           `json:"bounce_suppressed"`
}

// runInboxAct sends step 1 from a seasoned and a fresh mailbox (ramp
// start 3), puts a Gmail reply and a Postfix bounce in the seasoned
// mailbox's INBOX on an in-process IMAP server, and runs `inbox tick`.
func runInboxAct(ctx context.Context, r *runner, pool *pgxpool.Pool, dir, smtpURL string) (InboxAct, error) {
	act := InboxAct{}
	imap, err := imaptest.Start(nil)
	if err != nil {
		return act, fmt.Errorf("starting the demo's IMAP server: %w", err)
	}
	defer imap.Close()
	ar, err := stageInboxAct(ctx, r, pool, imap, dir, smtpURL)
	if err != nil {
		return act, err
	}
	if err := act.send(ctx, ar, pool); err != nil {
		return act, err
	}
	if err := act.answer(ctx, pool, imap); err != nil {
		return act, err
	}
	var read struct {
		Outcomes map[string]int `json:"outcomes"`
	}
	if err := ar.runJSON(ctx, "inbox-tick", &read, append(tickkind.Inbox.Args(), "--output", "json")...); err != nil {
		return act, err
	}
	act.Outcomes = read.Outcomes
	out, err := benchstore.DemoInboxOutcome(ctx, pool, act.ReplyLead, act.BounceLead)
	act.ReplyStatus, act.BounceStatus, act.Suppressed = out.ReplyStatus, out.BounceStatus, out.Suppressed
	return act, err
}

// stageInboxAct gives the two mailboxes IMAP accounts, imports their
// campaign, seeds its leads and enrolls them; the runner it returns has
// the mailboxes' password.
func stageInboxAct(ctx context.Context, r *runner, pool *pgxpool.Pool, imap *imaptest.Server, dir, smtpURL string) (*runner, error) {
	const password = "demo-imap-password"
	for _, mb := range []string{seasonedMailbox, freshMailbox} {
		if err := imap.AddAccount(mb, password); err != nil {
			return nil, err
		}
	}
	doc := fmt.Sprintf(`workspace: %s
name: %s
mailboxes:
  - address: %s
    smtp_url: %s
    imap_url: %s
    password_env: %s
  - address: %s
    smtp_url: %s
    imap_url: %s
    password_env: %s
    ramp: {start: 3, step: 3, every: 1d, max: 30}
steps:
  - subject: "Quick question, {{.FirstName}}"
    body: "Hi {{.FirstName}}, does {{.Company}} still do outbound by hand?"
  - delay: 72h
    body: "Following up."
`, inboxWorkspace, inboxCampaign, seasonedMailbox, smtpURL, imap.URL(seasonedMailbox), inboxPasswordEnv,
		freshMailbox, smtpURL, imap.URL(freshMailbox), inboxPasswordEnv)
	path := filepath.Join(dir, "inbox-campaign.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		return nil, err
	}
	ar := &runner{binary: r.binary, env: append(slices.Clone(r.env), inboxPasswordEnv+"="+password), logDir: r.logDir}
	if _, err := ar.run(ctx, "inbox-import-campaign", "import", "campaign", path); err != nil {
		return nil, err
	}
	if err := benchstore.DemoSeedInboxLeads(ctx, pool, inboxWorkspace, inboxLeads); err != nil {
		return nil, fmt.Errorf("seeding the inbox act's leads: %w", err)
	}
	if _, err := ar.run(ctx, "inbox-enroll", "enroll", "--workspace", inboxWorkspace, "--campaign", inboxCampaign, "--all-leads"); err != nil {
		return nil, err
	}
	return ar, nil
}

// send runs the email tick and reads what each mailbox sent against the
// fresh one's ramp.
func (act *InboxAct) send(ctx context.Context, ar *runner, pool *pgxpool.Pool) error {
	var sent struct {
		ByMailbox map[string]int `json:"by_mailbox"`
	}
	if err := ar.runJSON(ctx, "inbox-email-tick", &sent, append(tickkind.Email.Args(), "--max-duration", "10s", "--output", "json")...); err != nil {
		return err
	}
	act.RampSent, act.SeasonedSent = sent.ByMailbox[freshMailbox], sent.ByMailbox[seasonedMailbox]
	ramp, err := benchstore.DemoMailboxRamp(ctx, pool, freshMailbox)
	if err == nil && ramp.CapToday == nil {
		err = fmt.Errorf("mailbox %s has no cap today", freshMailbox)
	}
	if err != nil {
		return fmt.Errorf("reading the ramp: %w", err)
	}
	act.RampCapToday, act.RampDue = int(*ramp.CapToday), int(ramp.Enrollments)
	return nil
}

// answer puts a reply and a bounce to two of the seasoned mailbox's
// messages in its INBOX.
func (act *InboxAct) answer(ctx context.Context, pool *pgxpool.Pool, imap *imaptest.Server) error {
	seasoned, err := benchstore.DemoFirstSends(ctx, pool, seasonedMailbox)
	if err != nil || len(seasoned) < 2 {
		return fmt.Errorf("the seasoned mailbox sent %d messages, want 2 or more: %v", len(seasoned), err)
	}
	var ids, leads []string
	for _, s := range seasoned {
		if s.Email == nil {
			return fmt.Errorf("message %s went to a lead without an address", s.MessageID)
		}
		ids, leads = append(ids, s.MessageID), append(leads, *s.Email)
	}
	act.ReplyLead, act.BounceLead = leads[0], leads[1]
	for i, sample := range []string{"gmail-reply.eml", "postfix-bounce.eml"} {
		msg := imaptest.Sample(sample, imaptest.Fill{MessageID: ids[i], Mailbox: seasonedMailbox, Recipient: leads[i]})
		if err := imap.Deliver(seasonedMailbox, msg); err != nil {
			return err
		}
	}
	return nil
}
