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
			PasswordEnv: mb.PasswordEnv, Cap: mb.Cap, GapMin: mb.Gap.Min, GapMax: mb.Gap.Max, VERP: mb.VERP,
			HELO: mb.HELO, TLSCA: mb.TLSCA, Auth: authRecord(mb.OAuth2),
		}
		if mb.IMAP != nil {
			r.IMAPURL = mb.IMAP.String()
		}
		rec.Mailboxes = append(rec.Mailboxes, r)
	}
	return rec
}

// campaignFromRecord loads a stored campaign into its domain types. Import
// validated every value, so nothing is checked again: only what the store
// keeps as text (URLs, the window's zone and clocks, the OAuth2 settings'
// JSON) is parsed, and the templates are compiled.
func campaignFromRecord(rec store.CampaignRecord) (*Campaign, error) {
	c := &Campaign{Workspace: rec.Workspace, Name: rec.Name, UnsubscribeURL: rec.UnsubscribeURL, FollowUpsFirst: rec.FollowUpsFirst,
		BounceGuard: BounceGuard{RateMax: rec.BounceRateMax, StreakMax: rec.BounceStreakMax}}
	fail := func(err error) (*Campaign, error) {
		return nil, fmt.Errorf("stored campaign %s/%s: %w (re-import it)", rec.Workspace, rec.Name, err)
	}
	var err error
	if c.UnsubscribeURL != "" {
		if c.unsubscribe, err = parseFieldTemplate("unsubscribe_url", c.UnsubscribeURL); err != nil {
			return fail(err)
		}
	}
	if rec.WindowTimezone != "" {
		if c.Window, err = NewWindow(rec.WindowTimezone, rec.WindowDays, rec.WindowStart, rec.WindowEnd); err != nil {
			return fail(err)
		}
	}
	for i, sr := range rec.Steps {
		st := Step{Delay: sr.Delay, Subject: sr.Subject, Body: sr.Body}
		if err := st.compile(fmt.Sprintf("steps[%d]", i), i); err != nil {
			return fail(err)
		}
		c.Steps = append(c.Steps, st)
	}
	for _, mr := range rec.Mailboxes {
		mb, err := MailboxFromRecord(mr)
		if err != nil {
			return fail(err)
		}
		c.Mailboxes = append(c.Mailboxes, mb)
	}
	return c, nil
}

// MailboxFromRecord loads a stored mailbox, with its VERP secret when VERP
// is on. Its SMTP URL is stored as import settled it (an OAuth2 mailbox's
// user and TLS included), so it is only parsed.
func MailboxFromRecord(rec store.MailboxRecord) (Mailbox, error) {
	mb := Mailbox{ID: rec.ID, Address: rec.Address, Name: rec.DisplayName, PasswordEnv: rec.PasswordEnv, Cap: rec.Cap,
		Gap: Gap{Min: rec.GapMin, Max: rec.GapMax}, HELO: rec.HELO, TLSCA: rec.TLSCA, VERP: rec.VERP}
	if mb.VERP {
		mb.VERPSecret = rec.VERPSecret
	}
	fail := func(field string, err error) (Mailbox, error) {
		return Mailbox{}, fmt.Errorf("mailbox %s: %s: %w", strings.ToLower(rec.Address), field, err)
	}
	var err error
	if mb.SMTP, err = ParseSMTPURL(rec.SMTPURL); err != nil {
		return fail("smtp_url", err)
	}
	if rec.IMAPURL != "" {
		imap, err := ParseIMAPURL(rec.IMAPURL, rec.Address)
		if err != nil {
			return fail("imap_url", err)
		}
		mb.IMAP = &imap
	}
	if mb.OAuth2, err = authFromRecord(rec.Auth); err != nil {
		return fail("auth", err)
	}
	return mb, nil
}
