// Package sequence is the email domain: campaigns and their steps, sender
// binding, sending windows, templates, SMTP delivery and the classification of
// SMTP replies into domain errors.
package sequence

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/sendcap"
)

// CampaignFileMaxBytesDefault bounds a campaign file: a campaign is a handful
// of mailboxes and steps, so anything larger is a mistake, not a campaign.
const CampaignFileMaxBytesDefault = 1 << 20

// Campaign is a validated campaign definition, as imported from YAML.
type Campaign struct {
	Workspace string
	Name      string
	Mailboxes []Mailbox
	// Window is nil when the campaign may send at any time.
	Window *Window
	Steps  []Step
	// UnsubscribeURL is a template (lead fields are query-escaped); empty
	// means no List-Unsubscribe headers.
	UnsubscribeURL string
	// FollowUpsFirst sends due follow-ups before first steps when a
	// mailbox's cap cannot cover everything due (default true).
	FollowUpsFirst bool
	// BounceGuard pauses the campaign's mailboxes when they bounce too much.
	BounceGuard BounceGuard

	unsubscribe *fieldTemplate
	// unsubscribeBase is the unsubscribe server's base URL the email tick
	// was given (unsubscribe.BaseURLEnv); empty: none.
	unsubscribeBase string
}

// SetUnsubscribeBase sets the unsubscribe server's base URL (from
// unsubscribe.ParseBaseURL) that one-click URLs are built on when the
// campaign has no unsubscribe_url of its own.
func (c *Campaign) SetUnsubscribeBase(base string) { c.unsubscribeBase = base }

// Mailbox is one sender account of a campaign.
type Mailbox struct {
	// ID is the stored mailbox's id (0 before import): its OAuth2 tokens
	// are kept by it.
	ID      int64
	Address string
	// Name is the optional display name of the From header.
	Name string
	SMTP SMTPEndpoint
	// PasswordEnv names the environment variable holding the SMTP password;
	// the password itself is never stored.
	PasswordEnv string
	// OAuth2, when set, signs the mailbox in with SASL XOAUTH2 and tokens
	// from `rindactl mailbox authorize` instead of a password.
	OAuth2 *mailauth.Settings
	// Cap is its daily cap and warm-up ramp.
	Cap sendcap.Cap
	// IMAP is where `inbox tick` reads replies and bounces; nil: not read.
	IMAP *IMAPEndpoint
	// Gap spaces the mailbox's consecutive sends.
	Gap Gap
	// HELO is the name announced in EHLO/HELO for this mailbox; empty:
	// the Mailer's (RINDA_SMTP_HELO, the host's FQDN, an address literal).
	HELO string
	// TLSCA is the absolute path of a PEM file of a private CA trusted
	// for this mailbox's SMTP and IMAP servers, besides the system roots.
	TLSCA string
	// VERP gives each message its own return path (see verp.go), made with
	// VERPSecret, which only the database holds.
	VERP       bool
	VERPSecret []byte
}

// Step is one message of the sequence. Step 0 opens the thread; later steps
// reply in it.
type Step struct {
	// Delay is counted from enrollment for step 0 and from the previous
	// step's send for the others.
	Delay   time.Duration
	Subject string
	Body    string

	subject *fieldTemplate
	body    *fieldTemplate
}

type campaignFile struct {
	Workspace      string           `yaml:"workspace"`
	Name           string           `yaml:"name"`
	UnsubscribeURL string           `yaml:"unsubscribe_url"`
	FollowUpsFirst *bool            `yaml:"follow_ups_first"`
	BounceGuard    *bounceGuardFile `yaml:"bounce_guard"`
	Ramp           *rampFile        `yaml:"ramp"`
	Gap            string           `yaml:"gap"`
	Mailboxes      []mailboxFile    `yaml:"mailboxes"`
	Window         *windowFile      `yaml:"window"`
	Steps          []stepFile       `yaml:"steps"`
}

type mailboxFile struct {
	Address     string    `yaml:"address"`
	Name        string    `yaml:"name"`
	SMTPURL     string    `yaml:"smtp_url"`
	PasswordEnv string    `yaml:"password_env"`
	DailyCap    int       `yaml:"daily_cap"`
	IMAPURL     string    `yaml:"imap_url"`
	Ramp        *rampFile `yaml:"ramp"`
	Gap         string    `yaml:"gap"`
	HELO        string    `yaml:"helo"`
	TLSCA       string    `yaml:"tls_ca"`
	VERP        bool      `yaml:"verp"`
	Auth        *authFile `yaml:"auth"`
}

type windowFile struct {
	Timezone string   `yaml:"timezone"`
	Days     []string `yaml:"days"`
	Start    string   `yaml:"start"`
	End      string   `yaml:"end"`
}

type stepFile struct {
	Delay   string `yaml:"delay"`
	Subject string `yaml:"subject"`
	Body    string `yaml:"body"`
}

// ParseCampaign reads and validates a campaign YAML document. Every error
// names the offending field's path, e.g. `steps[1].delay: invalid duration "3x"`.
func ParseCampaign(r io.Reader) (*Campaign, error) {
	data, err := io.ReadAll(io.LimitReader(r, CampaignFileMaxBytesDefault+1))
	if err != nil {
		return nil, fmt.Errorf("read campaign: %w", err)
	}
	if len(data) > CampaignFileMaxBytesDefault {
		return nil, fmt.Errorf("campaign file is larger than %d bytes; a campaign is a few mailboxes and steps", CampaignFileMaxBytesDefault)
	}

	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("campaign YAML: %w", err)
	}
	if len(root.Content) == 0 {
		return nil, errors.New("campaign YAML is empty")
	}
	if err := checkKnownFields(root.Content[0], "", campaignFields); err != nil {
		return nil, err
	}

	var file campaignFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("campaign YAML: %w", err)
	}
	return file.validate(true)
}

// validate checks the file; stored campaigns may have lost every mailbox
// (their follow-ups keep their own), so requireMailboxes is for YAML only.
func (f *campaignFile) validate(requireMailboxes bool) (*Campaign, error) {
	c := &Campaign{Workspace: strings.TrimSpace(f.Workspace), Name: strings.TrimSpace(f.Name), FollowUpsFirst: f.FollowUpsFirst == nil || *f.FollowUpsFirst}
	if c.Workspace == "" {
		return nil, errors.New("workspace: required")
	}
	if c.Name == "" {
		return nil, errors.New("name: required")
	}

	var err error
	if c.UnsubscribeURL, c.unsubscribe, err = f.unsubscribeURL(); err != nil {
		return nil, err
	}
	if c.BounceGuard, err = f.BounceGuard.validate("bounce_guard"); err != nil {
		return nil, err
	}
	if requireMailboxes && len(f.Mailboxes) == 0 {
		return nil, errors.New("mailboxes: at least one mailbox is required")
	}
	if c.Mailboxes, err = f.mailboxes(); err != nil {
		return nil, err
	}
	if f.Window != nil {
		if c.Window, err = f.Window.validate("window"); err != nil {
			return nil, err
		}
	}
	if c.Steps, err = f.steps(); err != nil {
		return nil, err
	}
	return c, nil
}

// unsubscribeURL checks the campaign's own unsubscribe_url ("": none)
// and parses it as a template.
func (f *campaignFile) unsubscribeURL() (string, *fieldTemplate, error) {
	if f.UnsubscribeURL == "" {
		return "", nil, nil
	}
	u, err := url.Parse(f.UnsubscribeURL)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return "", nil, fmt.Errorf("unsubscribe_url: %q is not an http(s) URL", f.UnsubscribeURL)
	}
	t, err := parseFieldTemplate("unsubscribe_url", f.UnsubscribeURL)
	if err != nil {
		return "", nil, err
	}
	return f.UnsubscribeURL, t, nil
}

// mailboxes checks each mailbox, with the campaign's ramp and gap for
// those without their own, and refuses an address listed twice.
func (f *campaignFile) mailboxes() ([]Mailbox, error) {
	var out []Mailbox
	seen := make(map[string]int, len(f.Mailboxes))
	for i, mf := range f.Mailboxes {
		if mf.Ramp == nil {
			mf.Ramp = f.Ramp
		}
		if mf.Gap == "" {
			mf.Gap = f.Gap
		}
		mb, err := mf.validate(fmt.Sprintf("mailboxes[%d]", i))
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(mb.Address)
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("mailboxes[%d].address: %q is already mailboxes[%d]", i, mb.Address, j)
		}
		seen[key] = i
		out = append(out, mb)
	}
	return out, nil
}

// steps checks the sequence: at least one step, each valid.
func (f *campaignFile) steps() ([]Step, error) {
	if len(f.Steps) == 0 {
		return nil, errors.New("steps: at least one step is required")
	}
	out := make([]Step, 0, len(f.Steps))
	for i, sf := range f.Steps {
		st, err := sf.validate(fmt.Sprintf("steps[%d]", i), i)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func (f mailboxFile) validate(path string) (Mailbox, error) {
	addr, err := mail.ParseAddress(f.Address)
	if err != nil || addr.Name != "" || addr.Address != f.Address {
		return Mailbox{}, fmt.Errorf("%s.address: %q is not a bare email address", path, f.Address)
	}
	if strings.ContainsAny(f.Name, "\r\n") {
		return Mailbox{}, fmt.Errorf("%s.name: must be a single line", path)
	}
	ep, err := ParseSMTPURL(f.SMTPURL)
	if err != nil {
		return Mailbox{}, fmt.Errorf("%s.smtp_url: %w", path, err)
	}
	oauth, ep, err := f.checkAuth(path, ep)
	if err != nil {
		return Mailbox{}, err
	}
	if err := f.checkSending(path, ep.Username != "" && oauth == nil); err != nil {
		return Mailbox{}, err
	}
	mb := Mailbox{Address: f.Address, Name: f.Name, SMTP: ep, PasswordEnv: f.PasswordEnv, OAuth2: oauth, Cap: sendcap.Cap{Daily: f.DailyCap}, HELO: f.HELO, TLSCA: f.TLSCA, VERP: f.VERP}
	if mb.IMAP, err = f.imap(path, oauth != nil); err != nil {
		return Mailbox{}, err
	}
	if mb.Cap.Ramp, err = f.Ramp.validate(path + ".ramp"); err != nil {
		return Mailbox{}, err
	}
	if f.Gap != "" {
		if mb.Gap, err = ParseGap(f.Gap); err != nil {
			return Mailbox{}, fmt.Errorf("%s.gap: %w", path, err)
		}
	}
	return mb, nil
}

// imap checks imap_url ("": not read); withOAuth: no password needed.
func (f mailboxFile) imap(path string, withOAuth bool) (*IMAPEndpoint, error) {
	if f.IMAPURL == "" {
		return nil, nil
	}
	imap, err := ParseIMAPURL(f.IMAPURL, f.Address)
	if err != nil {
		return nil, fmt.Errorf("%s.imap_url: %w", path, err)
	}
	if f.PasswordEnv == "" && !withOAuth {
		return nil, fmt.Errorf("%s.password_env: required with imap_url; name the environment variable holding the password", path)
	}
	return &imap, nil
}

// checkSending checks the mailbox's sending settings beside its SMTP URL
// (withUser: the URL names a user): its password variable, daily cap,
// greeting name and CA file.
func (f mailboxFile) checkSending(path string, withUser bool) error {
	switch {
	case withUser && f.PasswordEnv == "":
		return fmt.Errorf("%s.password_env: required when smtp_url has a user; name the environment variable holding the password", path)
	case f.PasswordEnv != "" && !isEnvName(f.PasswordEnv):
		return fmt.Errorf("%s.password_env: %q is not an environment variable name", path, f.PasswordEnv)
	case f.DailyCap < 0:
		return fmt.Errorf("%s.daily_cap: %d is negative; use 0 for no cap", path, f.DailyCap)
	case f.HELO != "" && !ValidGreetingName(f.HELO):
		return fmt.Errorf("%s.helo: %q is not a fully qualified host name (mail.example.com) or an address literal ([192.0.2.1]); servers refuse a bare name", path, f.HELO)
	case f.TLSCA != "" && (!filepath.IsAbs(f.TLSCA) || filepath.Clean(f.TLSCA) != f.TLSCA):
		return fmt.Errorf("%s.tls_ca: %q is not a clean absolute path; name the PEM file of the CA as every tick host sees it (/etc/rindactl/ca.pem)", path, f.TLSCA)
	}
	return nil
}

func (f stepFile) validate(path string, index int) (Step, error) {
	d, err := time.ParseDuration(f.Delay)
	if f.Delay == "" {
		d, err = 0, nil
	}
	if err != nil {
		return Step{}, fmt.Errorf("%s.delay: invalid duration %q (use Go durations such as 0s, 90m, 72h)", path, f.Delay)
	}
	if d < 0 {
		return Step{}, fmt.Errorf("%s.delay: %q is negative", path, f.Delay)
	}
	st := Step{Delay: d, Subject: f.Subject, Body: f.Body}
	switch {
	case index == 0 && strings.TrimSpace(f.Subject) == "":
		return Step{}, fmt.Errorf("%s.subject: required on the first step", path)
	case index > 0 && f.Subject != "":
		return Step{}, fmt.Errorf("%s.subject: follow-ups reply in the thread as \"Re: <first subject>\"; remove this subject", path)
	}
	if strings.TrimSpace(f.Body) == "" {
		return Step{}, fmt.Errorf("%s.body: required", path)
	}
	return st, st.compile(path, index)
}

// compile parses the step's templates: the first step's subject (later
// steps reply under it) and its body.
func (st *Step) compile(path string, index int) error {
	var err error
	if index == 0 {
		if st.subject, err = parseFieldTemplate(path+".subject", st.Subject); err != nil {
			return err
		}
	}
	st.body, err = parseFieldTemplate(path+".body", st.Body)
	return err
}

func isEnvName(s string) bool {
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// MailboxByAddress returns the campaign's mailbox with that address.
func (c *Campaign) MailboxByAddress(address string) (Mailbox, bool) {
	for _, mb := range c.Mailboxes {
		if strings.EqualFold(mb.Address, address) {
			return mb, true
		}
	}
	return Mailbox{}, false
}
