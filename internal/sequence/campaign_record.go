package sequence

import (
	"fmt"
	"strings"

	"github.com/rindactl/rindactl/internal/store"
)

// Record is the campaign as the store keeps it.
func (c *Campaign) Record() store.CampaignRecord {
	rec := store.CampaignRecord{Workspace: c.Workspace, Name: c.Name, UnsubscribeURL: c.UnsubscribeURL, FollowUpsFirst: c.FollowUpsFirst,
		BounceRateMax: c.BounceGuard.RateMax, BounceStreakMax: c.BounceGuard.StreakMax}
	if w := c.Window; w != nil {
		rec.WindowTimezone, rec.WindowDays = w.Timezone, w.DayNames()
		rec.WindowStart, rec.WindowEnd = Clock(w.Start), Clock(w.End)
	}
	for i, st := range c.Steps {
		rec.Steps = append(rec.Steps, store.StepRecord{Step: i + 1, Delay: st.Delay, Subject: st.Subject, Body: st.Body})
	}
	for _, mb := range c.Mailboxes {
		r := store.MailboxRecord{
			Address: mb.Address, DisplayName: mb.Name, SMTPURL: mb.SMTP.String(),
			PasswordEnv: mb.PasswordEnv, DailyCap: mb.DailyCap, GapMin: mb.Gap.Min, GapMax: mb.Gap.Max, VERP: mb.VERP,
			HELO: mb.HELO, TLSCA: mb.TLSCA, Auth: authRecord(mb.OAuth2),
		}
		if mb.IMAP != nil {
			r.IMAPURL = mb.IMAP.String()
		}
		if rp := mb.Ramp; rp != nil {
			r.RampStart, r.RampStep, r.RampEvery, r.RampMax = rp.Start, rp.Step, rp.Every, rp.Max
		}
		rec.Mailboxes = append(rec.Mailboxes, r)
	}
	return rec
}

// campaignFromRecord rebuilds a stored campaign, validated and with its
// templates compiled exactly as at import.
func campaignFromRecord(rec store.CampaignRecord) (*Campaign, error) {
	f := campaignFile{Workspace: rec.Workspace, Name: rec.Name, UnsubscribeURL: rec.UnsubscribeURL, FollowUpsFirst: &rec.FollowUpsFirst,
		BounceGuard: BounceGuard{RateMax: rec.BounceRateMax, StreakMax: rec.BounceStreakMax}.file()}
	if rec.WindowTimezone != "" {
		f.Window = &windowFile{Timezone: rec.WindowTimezone, Days: rec.WindowDays, Start: rec.WindowStart, End: rec.WindowEnd}
	}
	for _, st := range rec.Steps {
		f.Steps = append(f.Steps, stepFile{Delay: st.Delay.String(), Subject: st.Subject, Body: st.Body})
	}
	for _, mb := range rec.Mailboxes {
		mf, err := mailboxFromRecordFile(mb)
		if err != nil {
			return nil, fmt.Errorf("stored campaign %s/%s: mailbox %s: %w (re-import it)", rec.Workspace, rec.Name, mb.Address, err)
		}
		f.Mailboxes = append(f.Mailboxes, mf)
	}
	c, err := f.validate(false)
	if err != nil {
		return nil, fmt.Errorf("stored campaign %s/%s: %w (re-import it)", rec.Workspace, rec.Name, err)
	}
	return c, nil
}

func mailboxFromRecordFile(mb store.MailboxRecord) (mailboxFile, error) {
	f := mailboxFile{Address: mb.Address, Name: mb.DisplayName, SMTPURL: mb.SMTPURL, PasswordEnv: mb.PasswordEnv, DailyCap: mb.DailyCap,
		IMAPURL: mb.IMAPURL, Gap: Gap{Min: mb.GapMin, Max: mb.GapMax}.String(), VERP: mb.VERP,
		HELO: mb.HELO, TLSCA: mb.TLSCA}
	if mb.RampStart > 0 {
		f.Ramp = (&Ramp{Start: mb.RampStart, Step: mb.RampStep, Every: mb.RampEvery, Max: mb.RampMax}).file()
	}
	var err error
	f.Auth, err = authFromRecord(mb.Auth)
	return f, err
}

// MailboxFromRecord validates a stored mailbox as import did, with its
// VERP secret when VERP is on.
func MailboxFromRecord(rec store.MailboxRecord) (Mailbox, error) {
	f, err := mailboxFromRecordFile(rec)
	if err != nil {
		return Mailbox{}, fmt.Errorf("mailbox %s: %w", strings.ToLower(rec.Address), err)
	}
	mb, err := f.validate("mailbox " + strings.ToLower(rec.Address))
	if err == nil && mb.VERP {
		mb.VERPSecret = rec.VERPSecret
	}
	mb.ID = rec.ID
	return mb, err
}
