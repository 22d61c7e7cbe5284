package store

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/sendcap"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
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
	// BounceRateMax and BounceStreakMax are the bounce-rate guard's limits
	// for the campaign's mailboxes; 0 turns one off.
	BounceRateMax   float64
	BounceStreakMax int
	Steps           []StepRecord
	Mailboxes       []MailboxRecord
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
	// Cap is the daily cap and warm-up ramp (stored as ramp_start 0: none).
	Cap     sendcap.Cap
	IMAPURL string // empty: the inbox is not read
	// GapMin and GapMax space its consecutive sends.
	GapMin, GapMax time.Duration
	Status         string
	PausedUntil    *time.Time
	// CapToday is the cap in force: Cap.Daily lowered by the ramp; 0 = none.
	CapToday int
	// VERP: each message gets its own return path, authenticated with
	// VERPSecret (made by the database, read only, never logged).
	VERP       bool
	VERPSecret []byte
	// HELO is the mailbox's own SMTP greeting name; empty: the host's.
	HELO string
	// TLSCA is the path of a PEM file of a private CA this mailbox's
	// servers are trusted by; empty: the system roots only.
	TLSCA string
	// Auth is the mailbox's OAuth2 settings as JSON (variable names and
	// endpoints, never a secret); nil: password auth.
	Auth []byte
}

// ErrCampaignNotFound is returned for an unknown workspace/campaign pair.
var ErrCampaignNotFound = errors.New("campaign not found")

//go:embed queries/byhand/email_steps_replace.sql
var emailStepsReplaceSQL string

// emailStepsReplaceParams are email_steps_replace.sql's parameters: the
// campaign and one array per step field, an element per step.
type emailStepsReplaceParams struct {
	CampaignID   int64    `db:"campaign_id"`
	Steps        []int32  `db:"steps"`
	DelaySeconds []int64  `db:"delay_seconds"`
	Subjects     []string `db:"subjects"`
	Bodies       []string `db:"bodies"`
}

var emailStepsReplaceStmt = byName[emailStepsReplaceParams](emailStepsReplaceSQL)

// UpsertCampaign writes a campaign, its steps and its mailboxes in tx and
// returns the campaign id and whether it was created.
func UpsertCampaign(ctx context.Context, tx pgx.Tx, rec CampaignRecord) (int64, bool, error) {
	q := sqlcdb.New(tx)
	wsID, err := q.EmailWorkspaceEnsure(ctx, rec.Workspace)
	if err != nil {
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
	c, err := q.EmailCampaignUpsert(ctx, sqlcdb.EmailCampaignUpsertParams{
		WorkspaceID: wsID, Name: rec.Name, WindowTimezone: tz, WindowDays: days, WindowStart: start, WindowEnd: end,
		UnsubscribeUrl: unsub, FollowUpsFirst: rec.FollowUpsFirst,
		BounceRateMax: rec.BounceRateMax, BounceStreakMax: int32(rec.BounceStreakMax),
	})
	if err != nil {
		return 0, false, fmt.Errorf("campaign %s: %w", rec.Name, err)
	}
	id := c.ID

	n := len(rec.Steps)
	p := emailStepsReplaceParams{CampaignID: id, Steps: make([]int32, n), DelaySeconds: make([]int64, n), Subjects: make([]string, n), Bodies: make([]string, n)}
	for i, st := range rec.Steps {
		p.Steps[i], p.DelaySeconds[i], p.Subjects[i], p.Bodies[i] = int32(st.Step), int64(st.Delay/time.Second), st.Subject, st.Body
	}
	if _, err := tx.Exec(ctx, emailStepsReplaceStmt.sql, emailStepsReplaceStmt.args(p)...); err != nil {
		return 0, false, fmt.Errorf("campaign %s steps: %w", rec.Name, err)
	}
	if err := q.EmailStepsTrim(ctx, sqlcdb.EmailStepsTrimParams{CampaignID: id, Step: int32(n)}); err != nil {
		return 0, false, fmt.Errorf("campaign %s steps: %w", rec.Name, err)
	}

	mailboxIDs := make([]int64, 0, len(rec.Mailboxes))
	for _, mb := range rec.Mailboxes {
		p := sqlcdb.EmailMailboxUpsertParams{
			WorkspaceID: wsID, Address: mb.Address, DisplayName: mb.DisplayName, SmtpUrl: mb.SMTPURL, PasswordEnv: mb.PasswordEnv,
			DailyCap: int32(mb.Cap.Daily), ImapUrl: mb.IMAPURL, GapMin: mb.GapMin, GapMax: mb.GapMax, Verp: mb.VERP,
			Helo: mb.HELO, TlsCa: mb.TLSCA, Auth: mb.Auth,
		}
		if r := mb.Cap.Ramp; r != nil {
			p.RampStart, p.RampStep, p.RampEvery, p.RampMax = int32(r.Start), int32(r.Step), r.Every, int32(r.Max)
		}
		mbID, err := q.EmailMailboxUpsert(ctx, p)
		if err != nil {
			return 0, false, fmt.Errorf("mailbox %s: %w", mb.Address, err)
		}
		mailboxIDs = append(mailboxIDs, mbID)
	}
	if err := q.EmailCampaignMailboxesSet(ctx, sqlcdb.EmailCampaignMailboxesSetParams{CampaignID: id, MailboxIds: mailboxIDs}); err != nil {
		return 0, false, fmt.Errorf("campaign %s mailboxes: %w", rec.Name, err)
	}
	return id, c.Created, nil
}

// LockCampaign finds a campaign by workspace and name and locks its
// bindings for the rest of tx (see LockCampaigns).
func LockCampaign(ctx context.Context, tx pgx.Tx, workspace, name string) (id, workspaceID int64, err error) {
	c, err := sqlcdb.New(tx).EmailCampaignByName(ctx, sqlcdb.EmailCampaignByNameParams{Workspace: workspace, Campaign: name})
	if errors.Is(err, pgx.ErrNoRows) {
		if _, werr := WorkspaceID(ctx, tx, workspace); errors.Is(werr, ErrNoWorkspace) {
			return 0, 0, fmt.Errorf("workspace %q not found: %w (list them with 'rindactl workspace list'; import leads or a campaign into it first)", workspace, ErrNoWorkspace)
		}
		return 0, 0, fmt.Errorf("campaign %q in workspace %q: %w (import it with 'rindactl import campaign FILE.yaml')", name, workspace, ErrCampaignNotFound)
	}
	if err != nil {
		return 0, 0, err
	}
	return c.ID, c.WorkspaceID, LockCampaigns(ctx, tx, []int64{c.ID})
}

// LockCampaigns serialises binding changes (enroll, rebinding) on these
// campaigns until tx ends, so loads are read and written consistently.
func LockCampaigns(ctx context.Context, tx pgx.Tx, ids []int64) error {
	if err := sqlcdb.New(tx).EmailCampaignLock(ctx, ids); err != nil {
		return fmt.Errorf("lock campaigns: %w", err)
	}
	return nil
}

// LoadCampaign reads a campaign with its steps and its current mailboxes.
func LoadCampaign(ctx context.Context, db DBTX, id int64) (CampaignRecord, error) {
	q := sqlcdb.New(db)
	c, err := q.EmailCampaignGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return CampaignRecord{}, fmt.Errorf("campaign %d: %w", id, ErrCampaignNotFound)
	}
	if err != nil {
		return CampaignRecord{}, fmt.Errorf("campaign %d: %w", id, err)
	}
	rec := CampaignRecord{
		ID: c.ID, WorkspaceID: c.WorkspaceID, Workspace: c.Workspace, Name: c.Name, Status: c.Status,
		WindowTimezone: c.WindowTimezone, WindowDays: c.WindowDays, WindowStart: c.WindowStart, WindowEnd: c.WindowEnd,
		UnsubscribeURL: c.UnsubscribeUrl, FollowUpsFirst: c.FollowUpsFirst,
		BounceRateMax: c.BounceRateMax, BounceStreakMax: int(c.BounceStreakMax),
	}
	steps, err := q.EmailStepsList(ctx, id)
	if err != nil {
		return rec, fmt.Errorf("campaign %d steps: %w", id, err)
	}
	rec.Steps = make([]StepRecord, len(steps))
	for i, st := range steps {
		rec.Steps[i] = StepRecord{Step: int(st.Step), Delay: time.Duration(st.DelaySeconds) * time.Second, Subject: st.Subject, Body: st.Body}
	}
	ids, err := q.EmailCampaignMailboxIDs(ctx, id)
	if err != nil {
		return rec, fmt.Errorf("campaign %d mailboxes: %w", id, err)
	}
	rec.Mailboxes, err = Mailboxes(ctx, db, ids)
	return rec, err
}

// rampCap is a stored mailbox's cap; ramp_start 0 is no ramp.
func rampCap(daily, start, step, maxCap int, every time.Duration) sendcap.Cap {
	c := sendcap.Cap{Daily: daily}
	if start > 0 {
		c.Ramp = &sendcap.Ramp{Start: start, Step: step, Every: every, Max: maxCap}
	}
	return c
}

// Mailboxes reads mailboxes by id.
func Mailboxes(ctx context.Context, db DBTX, ids []int64) ([]MailboxRecord, error) {
	rows, err := sqlcdb.New(db).EmailMailboxesGet(ctx, ids)
	return convertRows(rows, err, "mailboxes", func(r sqlcdb.EmailMailboxesGetRow) MailboxRecord {
		mb := MailboxRecord{
			ID: r.ID, Address: r.Address, DisplayName: r.DisplayName, SMTPURL: r.SmtpUrl, PasswordEnv: r.PasswordEnv,
			Cap:    rampCap(int(r.DailyCap), int(r.RampStart), int(r.RampStep), int(r.RampMax), r.RampEvery),
			Status: r.Status, PausedUntil: r.PausedUntil, IMAPURL: r.ImapUrl,
			GapMin: r.GapMin, GapMax: r.GapMax, VERP: r.Verp, VERPSecret: r.VerpSecret,
			HELO: r.Helo, TLSCA: r.TlsCa, Auth: r.Auth,
		}
		if r.CapToday != nil {
			mb.CapToday = int(*r.CapToday)
		}
		return mb
	})
}
