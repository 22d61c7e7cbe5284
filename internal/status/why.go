package status

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/tickkind"

	"github.com/rindactl/rindactl/internal/store"
)

// Hold is one thing that keeps a row from moving on, in plain words.
type Hold struct {
	// Code is stable for scripts: lease, backoff, negative_cache,
	// breaker_open, ceiling_reached, rate_limit, failed, campaign_paused,
	// not_due, no_email, suppressed, no_mailbox, mailbox_disabled,
	// mailbox_paused, daily_cap_reached, outside_window.
	Code   string     `json:"code"`
	Detail string     `json:"detail"`
	Until  *time.Time `json:"until,omitempty"`
}

// LeadExplanation is `why lead`.
type LeadExplanation struct {
	LeadID             int64      `json:"lead_id"`
	ExternalID         string     `json:"external_id"`
	Workspace          string     `json:"workspace"`
	Email              string     `json:"email"`
	Status             string     `json:"status"`
	Attempts           int        `json:"attempts"`
	NextAttemptAt      *time.Time `json:"next_attempt_at"`
	LockedBy           string     `json:"locked_by"`
	LockedUntil        *time.Time `json:"locked_until"`
	NegativeCacheUntil *time.Time `json:"negative_cache_until"`
	Provider           string     `json:"provider"`
	LastError          string     `json:"last_error"`
	Holds              []Hold     `json:"holds"`
	Summary            string     `json:"summary"`
}

// EnrollmentExplanation is `why enrollment`.
type EnrollmentExplanation struct {
	EnrollmentID int64      `json:"enrollment_id"`
	Workspace    string     `json:"workspace"`
	Campaign     string     `json:"campaign"`
	LeadID       int64      `json:"lead_id"`
	Status       string     `json:"status"`
	Step         int        `json:"step"`
	Steps        int        `json:"steps"`
	NextSendAt   time.Time  `json:"next_send_at"`
	Attempts     int        `json:"attempts"`
	Mailbox      string     `json:"mailbox"`
	LockedBy     string     `json:"locked_by"`
	LockedUntil  *time.Time `json:"locked_until"`
	LastError    string     `json:"last_error"`
	Holds        []Hold     `json:"holds"`
	Summary      string     `json:"summary"`
}

// NotFoundError says which row does not exist.
type NotFoundError struct{ msg string }

func (e *NotFoundError) Error() string { return e.msg }

// AmbiguousError is a lead reference that matches several leads.
type AmbiguousError struct{ msg string }

func (e *AmbiguousError) Error() string { return e.msg }

// ExplainLead explains lead ref (an id or an external id) at now.
func ExplainLead(ctx context.Context, db store.DBTX, now time.Time, ref, workspace string) (*LeadExplanation, error) {
	sc, err := resolve(ctx, db, Filter{Workspace: workspace})
	if err != nil {
		return nil, err
	}
	leads, err := store.OpsFindLeads(ctx, db, ref, sc.workspaceID)
	if err != nil {
		return nil, err
	}
	switch {
	case len(leads) == 0 && workspace != "":
		return nil, &NotFoundError{fmt.Sprintf("no lead %q in workspace %q (give a lead id or an external id)", ref, workspace)}
	case len(leads) == 0:
		return nil, &NotFoundError{fmt.Sprintf("no lead %q (give a lead id or an external id)", ref)}
	case len(leads) > 1:
		var where []string
		for _, l := range leads {
			where = append(where, fmt.Sprintf("id %d in %s", l.ID, l.Workspace))
		}
		return nil, &AmbiguousError{fmt.Sprintf("lead %q matches %d leads (%s): add --workspace or use the id", ref, len(leads), strings.Join(where, ", "))}
	}
	l := leads[0]
	x := &LeadExplanation{
		LeadID: l.ID, ExternalID: l.ExternalID, Workspace: l.Workspace, Email: l.Email,
		Status: string(l.Status), Attempts: l.Attempts, NextAttemptAt: utc(l.NextAttemptAt),
		LockedBy: l.LockedBy, LockedUntil: utc(l.LockedUntil), NegativeCacheUntil: utc(l.NegativeCacheUntil),
		Provider: l.Provider, LastError: Redact(l.LastError), Holds: []Hold{},
	}
	if !l.HasEnrichment {
		x.Status = "none"
		x.Summary = "this lead never needed enrichment (its address came with the import)"
		if l.Email == "" {
			x.Summary = "this lead has no enrichment row and no address: import it again or enroll it after enrichment"
		}
		return x, nil
	}
	switch l.Status {
	case lead.Enriched:
		x.Summary = fmt.Sprintf("enriched: address found by %s; nothing holds it", orUnknown(l.Provider))
		return x, nil
	case lead.NotFound:
		x.Summary = "not_found: every provider answered and none found an address; this is final"
		return x, nil
	case lead.EnrichmentFailed:
		x.Holds = append(x.Holds, Hold{Code: "failed", Detail: fmt.Sprintf(
			"enrichment gave up after %d attempt(s); only 'rindactl requeue --status=enrichment_failed' brings it back", l.Attempts)})
	case lead.InProgress:
		x.Holds = append(x.Holds, leaseHold(l.LockedBy, l.LockedUntil, now, tickkind.Enrich))
	case lead.Unreachable:
		if l.NegativeCacheUntil != nil && l.NegativeCacheUntil.After(now) {
			x.Holds = append(x.Holds, Hold{Code: "negative_cache", Until: utc(l.NegativeCacheUntil), Detail: fmt.Sprintf(
				"unreachable: %s blocked it (quota or auth); negative cache until %s, then it is retried by itself (or run 'rindactl requeue --status=unreachable')",
				orUnknown(l.Provider), stamp(*l.NegativeCacheUntil))})
		}
	case lead.Pending:
		if l.NextAttemptAt != nil && l.NextAttemptAt.After(now) {
			x.Holds = append(x.Holds, Hold{Code: "backoff", Until: utc(l.NextAttemptAt), Detail: fmt.Sprintf(
				"backing off after attempt %d: next attempt at %s", l.Attempts, stamp(*l.NextAttemptAt))})
		}
	}
	if l.Status != lead.EnrichmentFailed {
		guards, err := workspaceGuards(ctx, db, now, l.WorkspaceID, l.Workspace)
		if err != nil {
			return nil, err
		}
		x.Holds = append(x.Holds, guards...)
	}
	if x.LastError != "" {
		x.Holds = append(x.Holds, Hold{Code: "last_error", Detail: "last error: " + x.LastError})
	}
	x.Summary = leadSummary(x, now)
	return x, nil
}

// workspaceGuards lists the breakers, ceiling and rate limits that stop
// provider calls for a workspace at now.
func workspaceGuards(ctx context.Context, db store.DBTX, now time.Time, workspaceID int64, workspace string) ([]Hold, error) {
	var holds []Hold
	breakers, err := store.OpsBreakers(ctx, db, &workspaceID)
	if err != nil {
		return nil, err
	}
	for _, b := range breakers {
		if !BreakerOpen(b.State, b.OpenUntil, now) {
			continue
		}
		detail := fmt.Sprintf("%s breaker open until %s", b.Provider, stamp(*b.OpenUntil))
		if b.Reason != "" {
			detail += " (" + Redact(b.Reason) + ")"
		}
		holds = append(holds, Hold{Code: "breaker_open", Until: utc(b.OpenUntil), Detail: detail + ": no call to " + b.Provider + " until then"})
	}
	spend, err := store.OpsSpendSince(ctx, db, MonthStart(now), &workspaceID)
	if err != nil {
		return nil, err
	}
	for _, s := range spend {
		if s.CeilingUSD != nil && s.SpentUSD >= *s.CeilingUSD {
			next := MonthStart(now).AddDate(0, 1, 0)
			holds = append(holds, Hold{Code: "ceiling_reached", Until: &next, Detail: fmt.Sprintf(
				"workspace %s spent $%.2f of its $%.2f monthly ceiling: no provider call until %s or until the ceiling is raised ('rindactl workspace set')",
				workspace, s.SpentUSD, *s.CeilingUSD, next.Format("2006-01-02"))})
		}
	}
	limits, err := store.OpsBusyRateLimits(ctx, db, now, workspaceID)
	if err != nil {
		return nil, err
	}
	for _, rl := range limits {
		tat := rl.TAT.UTC()
		holds = append(holds, Hold{Code: "rate_limit", Until: &tat, Detail: fmt.Sprintf(
			"rate limit %s is drawn down until %s: calls beyond its burst wait", rl.Key, stamp(tat))})
	}
	return holds, nil
}

func leadSummary(x *LeadExplanation, now time.Time) string {
	for _, h := range x.Holds {
		switch h.Code {
		case "failed", "negative_cache", "breaker_open", "ceiling_reached", "lease", "backoff":
			return "held back: " + h.Detail
		}
	}
	if x.NextAttemptAt != nil && !x.NextAttemptAt.After(now) {
		return "due now: the next 'rindactl enrich tick' picks it up"
	}
	return x.Status
}

// ExplainEnrollment explains enrollment id at now.
func ExplainEnrollment(ctx context.Context, db store.DBTX, now time.Time, id int64) (*EnrollmentExplanation, error) {
	e, found, err := store.OpsFindEnrollment(ctx, db, id, now)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &NotFoundError{fmt.Sprintf("no enrollment %d (see 'rindactl status --output json' for campaigns)", id)}
	}
	x := &EnrollmentExplanation{
		EnrollmentID: e.ID, Workspace: e.Workspace, Campaign: e.Campaign, LeadID: e.LeadID, Status: string(e.Status),
		Step: e.CurrentStep, Steps: e.Steps, NextSendAt: e.NextSendAt.UTC(), Attempts: e.Attempts,
		Mailbox: e.MailboxAddress, LockedBy: e.LockedBy, LockedUntil: utc(e.LockedUntil),
		LastError: Redact(e.LastError), Holds: []Hold{},
	}
	switch e.Status {
	case enrollment.Completed:
		x.Summary = fmt.Sprintf("completed: all %d step(s) went out; nothing more to send", e.Steps)
		return x, nil
	case enrollment.Bounced, enrollment.Replied, enrollment.Unsubscribed:
		x.Summary = string(e.Status) + ": the sequence stopped for good for this lead"
		return x, nil
	case enrollment.Failed:
		x.Holds = append(x.Holds, Hold{Code: "failed", Detail: fmt.Sprintf(
			"step %d failed for good after %d attempt(s); 'rindactl requeue --status=failed' retries it", e.CurrentStep, e.Attempts)})
	case enrollment.DeliveryUnknown:
		x.Holds = append(x.Holds, Hold{Code: string(enrollment.DeliveryUnknown), Detail: fmt.Sprintf(
			"step %d went out through the final dot without an answer: the server may have it, so no tick sends it again; "+
				"check mailbox %s's Sent folder for its Message-ID, then 'rindactl requeue --status=delivery_unknown' to send it again, or leave it",
			e.CurrentStep, e.MailboxAddress)})
	}
	if e.CampaignStatus != "active" {
		x.Holds = append(x.Holds, Hold{Code: "campaign_paused", Detail: fmt.Sprintf("campaign %s is %s", e.Campaign, e.CampaignStatus)})
	}
	if e.LockedUntil != nil && e.LockedUntil.After(now) {
		x.Holds = append(x.Holds, leaseHold(e.LockedBy, e.LockedUntil, now, tickkind.Email))
	} else if e.Status == enrollment.Active && e.NextSendAt.After(now) {
		at := e.NextSendAt.UTC()
		x.Holds = append(x.Holds, Hold{Code: "not_due", Until: &at, Detail: fmt.Sprintf("step %d is scheduled for %s", e.CurrentStep, stamp(at))})
	}
	if e.LeadEmail == "" {
		x.Holds = append(x.Holds, Hold{Code: "no_email", Detail: fmt.Sprintf("lead %d has no email address yet (see 'rindactl why lead %d')", e.LeadID, e.LeadID)})
	}
	if e.Suppressed != "" {
		x.Holds = append(x.Holds, Hold{Code: "suppressed", Detail: "the address is suppressed (" + e.Suppressed + "): it is never mailed again"})
	}
	switch {
	case e.MailboxID == nil:
		x.Holds = append(x.Holds, Hold{Code: "no_mailbox", Detail: "no sender mailbox is bound: re-run 'rindactl enroll' after adding mailboxes to the campaign"})
	case e.MailboxStatus != "active":
		x.Holds = append(x.Holds, Hold{Code: "mailbox_disabled", Detail: fmt.Sprintf("mailbox %s is %s", e.MailboxAddress, e.MailboxStatus)})
	case e.MailboxPausedUntil != nil && e.MailboxPausedUntil.After(now):
		detail := fmt.Sprintf("mailbox %s is paused until %s", e.MailboxAddress, stamp(*e.MailboxPausedUntil))
		if e.MailboxPauseReason != "" {
			detail += " (" + Redact(e.MailboxPauseReason) + ")"
		}
		x.Holds = append(x.Holds, Hold{Code: "mailbox_paused", Until: utc(e.MailboxPausedUntil), Detail: detail})
	}
	if e.MailboxID != nil && e.MailboxDailyCap > 0 && e.MailboxSent24h >= int64(e.MailboxDailyCap) {
		x.Holds = append(x.Holds, Hold{Code: "daily_cap_reached", Detail: fmt.Sprintf(
			"mailbox %s sent %d of its daily cap of %d in the last 24 hours", e.MailboxAddress, e.MailboxSent24h, e.MailboxDailyCap)})
	}
	if e.MailboxGapUntil != nil && e.MailboxGapUntil.After(now) {
		x.Holds = append(x.Holds, Hold{Code: "gap", Until: utc(e.MailboxGapUntil), Detail: fmt.Sprintf(
			"mailbox %s keeps its human gap between sends until %s", e.MailboxAddress, stamp(*e.MailboxGapUntil))})
	}
	if w := newWindow(e.WindowTimezone, e.WindowDays, e.WindowStart, e.WindowEnd); !w.open(now, e.LeadTimezone) {
		local := now.In(w.location(e.LeadTimezone))
		x.Holds = append(x.Holds, Hold{Code: "outside_window", Detail: fmt.Sprintf(
			"outside the sending window (%s): it is %s there", w, local.Format("Mon 15:04 MST"))})
	}
	if e.LastSendStatus == enrollment.SendFailed {
		x.Holds = append(x.Holds, Hold{Code: "last_error", Detail: fmt.Sprintf("last send (step %d) failed: %s", e.LastSendStep, Redact(e.LastSendError))})
	}
	if x.LastError != "" {
		x.Holds = append(x.Holds, Hold{Code: "last_error", Detail: "last error: " + x.LastError})
	}
	x.Summary = enrollmentSummary(x)
	return x, nil
}

func enrollmentSummary(x *EnrollmentExplanation) string {
	for _, h := range x.Holds {
		if h.Code != "last_error" {
			return "held back: " + h.Detail
		}
	}
	return fmt.Sprintf("due now: the next 'rindactl email tick' sends step %d", x.Step)
}

func leaseHold(by string, until *time.Time, now time.Time, kind tickkind.Kind) Hold {
	if by == "" {
		by = "unknown"
	}
	if until == nil {
		return Hold{Code: "lease", Detail: "in progress (no lease end recorded)"}
	}
	if until.After(now) {
		return Hold{Code: "lease", Until: utc(until), Detail: fmt.Sprintf("being worked on by tick %s until %s", by, stamp(*until))}
	}
	return Hold{Code: "lease", Until: utc(until), Detail: fmt.Sprintf(
		"tick %s's lease ran out at %s (it probably crashed); the next %s tick takes the row back", by, stamp(*until), kind)}
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown provider"
	}
	return s
}

func stamp(t time.Time) string { return cliio.Stamp(t) }

// secretPattern matches key=value pairs that may carry a credential, as
// they could appear in a URL or a provider's echoed request.
var secretPattern = regexp.MustCompile(`(?i)((?:api[_-]?key|apikey|token|secret|password|passwd|authorization)["']?\s*[=:]\s*["']?)[^\s&"',;]+`)

// Redact hides credentials in text stored by others (last errors, reasons)
// before it is printed: the stores are meant to be free of them, and this
// keeps it so even when a provider echoes a request back.
func Redact(s string) string {
	return secretPattern.ReplaceAllString(s, "${1}[redacted]")
}
