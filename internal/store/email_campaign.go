package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// CampaignRecord is a campaign as stored: plain values, no templates.
type CampaignRecord struct {
	ID             int64
	WorkspaceID    int64
	Workspace      string
	Name           string
	Status         string
	WindowTimezone string // empty: no window
	WindowDays     []string
	WindowStart    string // HH:MM
	WindowEnd      string
	UnsubscribeURL string
	FollowUpsFirst bool
	Steps          []StepRecord
	Mailboxes      []MailboxRecord
}

// StepRecord is one sequence step; Step is 1-based.
type StepRecord struct {
	Step    int
	Delay   time.Duration
	Subject string
	Body    string
}

// MailboxRecord is a sender mailbox.
type MailboxRecord struct {
	ID          int64
	Address     string
	DisplayName string
	SMTPURL     string
	PasswordEnv string
	DailyCap    int
	IMAPURL     string // empty: the inbox is not read
	// Warm-up ramp (RampStart 0: none) and human gap between sends.
	RampStart, RampStep, RampMax int
	RampEvery                    time.Duration
	GapMin, GapMax               time.Duration
	Status                       string
	PausedUntil                  *time.Time
	// CapToday is the cap in force: DailyCap lowered by the ramp; 0 = none.
	CapToday int
}

// ErrCampaignNotFound is returned for an unknown workspace/campaign pair.
var ErrCampaignNotFound = errors.New("campaign not found")

// UpsertCampaign writes a campaign, its steps and its mailboxes in tx and
// returns the campaign id and whether it was created.
func UpsertCampaign(ctx context.Context, tx pgx.Tx, rec CampaignRecord) (int64, bool, error) {
	var wsID int64
	if err := tx.QueryRow(ctx, query("email_workspace_ensure"), rec.Workspace).Scan(&wsID); err != nil {
		return 0, false, fmt.Errorf("workspace %s: %w", rec.Workspace, err)
	}
	var (
		tz, start, end, unsub *string
		days                  []string
	)
	if rec.WindowTimezone != "" {
		tz, start, end, days = &rec.WindowTimezone, &rec.WindowStart, &rec.WindowEnd, rec.WindowDays
	}
	if rec.UnsubscribeURL != "" {
		unsub = &rec.UnsubscribeURL
	}
	var id int64
	var created bool
	if err := tx.QueryRow(ctx, query("email_campaign_upsert"), wsID, rec.Name, tz, days, start, end, unsub, rec.FollowUpsFirst).Scan(&id, &created); err != nil {
		return 0, false, fmt.Errorf("campaign %s: %w", rec.Name, err)
	}

	n := len(rec.Steps)
	steps, delays, subjects, bodies := make([]int32, n), make([]int64, n), make([]string, n), make([]string, n)
	for i, st := range rec.Steps {
		steps[i], delays[i], subjects[i], bodies[i] = int32(st.Step), int64(st.Delay/time.Second), st.Subject, st.Body
	}
	if _, err := tx.Exec(ctx, query("email_steps_replace"), id, steps, delays, subjects, bodies); err != nil {
		return 0, false, fmt.Errorf("campaign %s steps: %w", rec.Name, err)
	}
	if _, err := tx.Exec(ctx, query("email_steps_trim"), id, n); err != nil {
		return 0, false, fmt.Errorf("campaign %s steps: %w", rec.Name, err)
	}

	mailboxIDs := make([]int64, 0, len(rec.Mailboxes))
	for _, mb := range rec.Mailboxes {
		var mbID int64
		if err := tx.QueryRow(ctx, query("email_mailbox_upsert"), wsID, mb.Address, mb.DisplayName, mb.SMTPURL, mb.PasswordEnv, mb.DailyCap,
			mb.IMAPURL, mb.RampStart, mb.RampStep, mb.RampEvery, mb.RampMax, mb.GapMin, mb.GapMax).Scan(&mbID); err != nil {
			return 0, false, fmt.Errorf("mailbox %s: %w", mb.Address, err)
		}
		mailboxIDs = append(mailboxIDs, mbID)
	}
	if _, err := tx.Exec(ctx, query("email_campaign_mailboxes_set"), id, mailboxIDs); err != nil {
		return 0, false, fmt.Errorf("campaign %s mailboxes: %w", rec.Name, err)
	}
	return id, created, nil
}

// LockCampaign finds a campaign by workspace and name and locks its
// bindings for the rest of tx (see LockCampaigns).
func LockCampaign(ctx context.Context, tx pgx.Tx, workspace, name string) (id, workspaceID int64, err error) {
	err = tx.QueryRow(ctx, query("email_campaign_by_name"), workspace, name).Scan(&id, &workspaceID)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, fmt.Errorf("campaign %q in workspace %q: %w (import it with 'rindactl import campaign FILE.yaml')", name, workspace, ErrCampaignNotFound)
	}
	if err != nil {
		return 0, 0, err
	}
	return id, workspaceID, LockCampaigns(ctx, tx, []int64{id})
}

// LockCampaigns serialises binding changes (enroll, rebinding) on these
// campaigns until tx ends, so loads are read and written consistently.
func LockCampaigns(ctx context.Context, tx pgx.Tx, ids []int64) error {
	if _, err := tx.Exec(ctx, query("email_campaign_lock"), ids); err != nil {
		return fmt.Errorf("lock campaigns: %w", err)
	}
	return nil
}

// LoadCampaign reads a campaign with its steps and its current mailboxes.
func LoadCampaign(ctx context.Context, db DBTX, id int64) (CampaignRecord, error) {
	var rec CampaignRecord
	err := db.QueryRow(ctx, query("email_campaign_get"), id).Scan(&rec.ID, &rec.WorkspaceID, &rec.Workspace, &rec.Name,
		&rec.WindowTimezone, &rec.WindowDays, &rec.WindowStart, &rec.WindowEnd, &rec.UnsubscribeURL, &rec.Status, &rec.FollowUpsFirst)
	if errors.Is(err, pgx.ErrNoRows) {
		return rec, fmt.Errorf("campaign %d: %w", id, ErrCampaignNotFound)
	}
	if err != nil {
		return rec, fmt.Errorf("campaign %d: %w", id, err)
	}
	rows, err := db.Query(ctx, query("email_steps_list"), id)
	if err != nil {
		return rec, fmt.Errorf("campaign %d steps: %w", id, err)
	}
	rec.Steps, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (StepRecord, error) {
		var st StepRecord
		var secs int64
		err := r.Scan(&st.Step, &secs, &st.Subject, &st.Body)
		st.Delay = time.Duration(secs) * time.Second
		return st, err
	})
	if err != nil {
		return rec, fmt.Errorf("campaign %d steps: %w", id, err)
	}
	loads, err := MailboxLoads(ctx, db, id)
	if err != nil {
		return rec, err
	}
	ids := make([]int64, len(loads))
	for i, l := range loads {
		ids[i] = l.ID
	}
	rec.Mailboxes, err = Mailboxes(ctx, db, ids)
	return rec, err
}

// Mailboxes reads mailboxes by id.
func Mailboxes(ctx context.Context, db DBTX, ids []int64) ([]MailboxRecord, error) {
	rows, err := db.Query(ctx, query("email_mailboxes_get"), ids)
	if err != nil {
		return nil, fmt.Errorf("mailboxes: %w", err)
	}
	mbs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (MailboxRecord, error) {
		var mb MailboxRecord
		err := r.Scan(&mb.ID, &mb.Address, &mb.DisplayName, &mb.SMTPURL, &mb.PasswordEnv, &mb.DailyCap, &mb.Status, &mb.PausedUntil,
			&mb.IMAPURL, &mb.RampStart, &mb.RampStep, &mb.RampEvery, &mb.RampMax, &mb.GapMin, &mb.GapMax, &mb.CapToday)
		return mb, err
	})
	if err != nil {
		return nil, fmt.Errorf("mailboxes: %w", err)
	}
	return mbs, nil
}
