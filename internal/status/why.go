package status

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/tickkind"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
)

// Hold is one thing that keeps a row from moving on, in plain words.
type Hold struct {
	// Code is stable for scripts: lease, backoff, negative_cache,
	// verify_pending, in_doubt, breaker_open, ceiling_reached, rate_limit, failed, campaign_paused,
	// not_due, no_email, suppressed, no_mailbox, mailbox_disabled,
	// mailbox_paused, daily_cap_reached, outside_window; for a mailbox
	// also inbox_error and inbox_skipped.
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
	// FoundEmail is an address FoundBy found (and paid for) that awaits
	// verification; MissedBy the finders that answered without an address;
	// DoubtedBy those whose answer a tick lost (the call may have been
	// billed). None is asked again unless an operator requeues with
	// --refind, except the finders in doubt at DoubtRetryAt
	// (RINDA_IN_DOUBT_RETRY_AFTER past the doubt; nil: none, or off).
	FoundEmail   string     `json:"found_email,omitempty"`
	FoundBy      string     `json:"found_by,omitempty"`
	MissedBy     []string   `json:"missed_by"`
	DoubtedBy    []string   `json:"doubted_by"`
	DoubtRetryAt *time.Time `json:"doubt_retry_at"`
	Holds        []Hold     `json:"holds"`
	Summary      string     `json:"summary"`
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

// ExplainLead explains lead ref (an id or an external id) at now;
// inDoubtRetry is RINDA_IN_DOUBT_RETRY_AFTER (0 or less: off).
func ExplainLead(ctx context.Context, db store.DBTX, now time.Time, ref, workspace string, inDoubtRetry time.Duration) (*LeadExplanation, error) {
	sc, err := resolve(ctx, db, Filter{Workspace: workspace})
	if err != nil {
		return nil, err
	}
	leads, err := store.OpsFindLeads(ctx, db, ref, sc.workspaceID)
	if err != nil {
		return nil, err
	}
	l, err := oneLead(leads, ref, workspace)
	if err != nil {
		return nil, err
	}
	x := &LeadExplanation{
		LeadID: l.ID, ExternalID: l.ExternalID, Workspace: l.Workspace, Email: l.Email,
		Status: string(l.Status), Attempts: l.Attempts, NextAttemptAt: utc(l.NextAttemptAt),
		LockedBy: l.LockedBy, LockedUntil: utc(l.LockedUntil), NegativeCacheUntil: utc(l.NegativeCacheUntil),
		Provider: l.Provider, LastError: redact.String(l.LastError), Holds: []Hold{},
		FoundEmail: l.FoundEmail, FoundBy: l.FoundBy, MissedBy: append([]string{}, l.MissedBy...),
		DoubtedBy: append([]string{}, l.DoubtedBy...),
	}
	row := leadRowHolds(l, now)
	if row.summary != "" {
		x.Status, x.Summary = row.status, row.summary
		return x, nil
	}
	x.Holds = append(x.Holds, row.holds...)
	if h, ok := doubtHold(l, inDoubtRetry); ok {
		x.DoubtRetryAt = h.Until
		x.Holds = append(x.Holds, h)
	}
	if row.guarded {
		guards, err := workspaceGuards(ctx, db, now, l.WorkspaceID, l.Workspace)
		if err != nil {
			return nil, err
		}
		x.Holds = append(x.Holds, guards...)
	}
	if !row.saidLastError {
		x.Holds = append(x.Holds, lastErrorHolds(x.LastError)...)
	}
	x.Summary = leadSummary(x, now)
	return x, nil
}

// oneLead picks the lead a reference names, or says why none or several.
func oneLead(leads []store.OpsLead, ref, workspace string) (store.OpsLead, error) {
	switch {
	case len(leads) == 0 && workspace != "":
		return store.OpsLead{}, &NotFoundError{fmt.Sprintf("no lead %q in workspace %q (give a lead id or an external id)", ref, workspace)}
	case len(leads) == 0:
		return store.OpsLead{}, &NotFoundError{fmt.Sprintf("no lead %q (give a lead id or an external id)", ref)}
	case len(leads) > 1:
		var where []string
		for _, l := range leads {
			where = append(where, fmt.Sprintf("id %d in %s", l.ID, l.Workspace))
		}
		return store.OpsLead{}, &AmbiguousError{fmt.Sprintf("lead %q matches %d leads (%s): add --workspace or use the id", ref, len(leads), strings.Join(where, ", "))}
	}
	return leads[0], nil
}

// leadRow is what a lead's own enrichment row says at now.
type leadRow struct {
	// summary is set when the row is final: nothing can hold it, and
	// status is what to show.
	status, summary string
	holds           []Hold
	// guarded: the workspace's breakers, ceiling and rate limits apply.
	guarded bool
	// saidLastError: a hold already gives the last error as its cause.
	saidLastError bool
}

func leadRowHolds(l store.OpsLead, now time.Time) leadRow {
	if !l.HasEnrichment {
		return unenrichedLead(l)
	}
	row := leadRow{status: string(l.Status), guarded: true}
	switch l.Status {
	case lead.Enriched:
		row.summary = fmt.Sprintf("enriched: address found by %s; nothing holds it", orUnknown(l.Provider))
	case lead.NotFound:
		row.summary = "not_found: every provider answered and none found an address; this is final"
	case lead.EnrichmentFailed:
		// Only requeue moves it: no guard matters.
		row.guarded = false
		row.holds = []Hold{{Code: "failed", Detail: fmt.Sprintf(
			"enrichment gave up after %d attempt(s); only 'rindactl requeue --status=enrichment_failed' brings it back", l.Attempts)}}
	case lead.InProgress:
		row.holds = []Hold{leaseHold(l.LockedBy, l.LockedUntil, now, tickkind.Enrich)}
	case lead.Unreachable:
		if l.NegativeCacheUntil != nil && l.NegativeCacheUntil.After(now) {
			row.saidLastError = l.LastError != ""
			row.holds = []Hold{{Code: "negative_cache", Until: utc(l.NegativeCacheUntil), Detail: fmt.Sprintf(
				"unreachable: %s; negative cache until %s, then it is retried by itself (or run 'rindactl requeue --status=unreachable')",
				cause(l), stamp(*l.NegativeCacheUntil))}}
		}
	case lead.Pending:
		if l.NextAttemptAt != nil && l.NextAttemptAt.After(now) {
			detail := fmt.Sprintf("backing off after attempt %d: next attempt at %s", l.Attempts, stamp(*l.NextAttemptAt))
			if l.LastError != "" {
				row.saidLastError = true
				detail = fmt.Sprintf("waiting until %s: %s", stamp(*l.NextAttemptAt), redact.String(l.LastError))
			}
			row.holds = []Hold{{Code: "backoff", Until: utc(l.NextAttemptAt), Detail: detail}}
		}
	}
	if l.FoundEmail != "" && l.Status != lead.Enriched {
		row.holds = append(row.holds, Hold{Code: "verify_pending", Detail: fmt.Sprintf(
			"verify pending: %s, found (and paid for) by %s, waits for the verifier; no finder is asked for this lead again (only 'rindactl requeue --refind' asks them)",
			l.FoundEmail, l.FoundBy)})
	}
	return row
}

// doubtHold says when the finders whose answer for l was lost (maybe
// billed) are asked again: inDoubtRetry past the doubt, a possible second
// charge; never by themselves when the retry is off.
func doubtHold(l store.OpsLead, inDoubtRetry time.Duration) (Hold, bool) {
	if len(l.DoubtedBy) == 0 {
		return Hold{}, false
	}
	names := strings.Join(l.DoubtedBy, ", ")
	lost := names + "'s answer for this lead was lost (a tick could not record it; it may have been billed): "
	if inDoubtRetry <= 0 || l.DoubtedAt == nil {
		return Hold{Code: "in_doubt", Detail: lost + "not asked again (RINDA_IN_DOUBT_RETRY_AFTER=off) until 'rindactl requeue --refind'"}, true
	}
	at := l.DoubtedAt.Add(inDoubtRetry).UTC()
	return Hold{Code: "in_doubt", Until: &at, Detail: fmt.Sprintf(
		"%sasked again at %s (RINDA_IN_DOUBT_RETRY_AFTER %s), a possible second charge; 'rindactl requeue --refind' asks at once",
		lost, stamp(at), inDoubtRetry)}, true
}

// cause is what parked an unreachable lead, in the words its tick left
// (the provider and its answer, or the block and until when).
func cause(l store.OpsLead) string {
	if l.LastError != "" {
		return redact.String(l.LastError)
	}
	return orUnknown(l.Provider) + " blocked it"
}

// unenrichedLead is a lead without an enrichment row: final either way.
func unenrichedLead(l store.OpsLead) leadRow {
	if l.Email == "" {
		return leadRow{status: "none", summary: "this lead has no enrichment row and no address: import it again or enroll it after enrichment"}
	}
	return leadRow{status: "none", summary: "this lead never needed enrichment (its address came with the import)"}
}

// lastErrorHolds shows the row's last error, already redacted.
func lastErrorHolds(lastError string) []Hold {
	if lastError == "" {
		return nil
	}
	return []Hold{{Code: "last_error", Detail: "last error: " + lastError}}
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
			detail += " (" + redact.String(b.Reason) + ")"
		}
		holds = append(holds, Hold{Code: "breaker_open", Until: utc(b.OpenUntil), Detail: detail + ": no call to " + b.Provider + " until then"})
	}
	spend, err := store.OpsSpendSince(ctx, db, MonthStart(now), &workspaceID)
	if err != nil {
		return nil, err
	}
	for _, s := range spend {
		if !atCeiling(s.SpentUSD, s.CeilingUSD) {
			continue
		}
		if ceilingHeldInFlight(s) {
			until := now.Add(store.CeilingInFlightWait)
			holds = append(holds, Hold{Code: "ceiling_in_flight", Until: &until, Detail: fmt.Sprintf(
				"workspace %s has $%.2f of its $%.2f monthly ceiling reserved by calls in flight: provider calls wait for them to settle (a miss is refunded), then the ceiling decides",
				workspace, s.InFlightUSD, *s.CeilingUSD)})
		} else {
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
		case "failed", "negative_cache", "breaker_open", "ceiling_reached", "ceiling_in_flight", "lease", "backoff", "verify_pending":
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
		LastError: redact.String(e.LastError), Holds: []Hold{},
	}
	if summary, final := enrollmentFinal(e); final {
		x.Summary = summary
		return x, nil
	}
	x.Holds = append(x.Holds, enrollmentHolds(e, now)...)
	x.Holds = append(x.Holds, lastErrorHolds(x.LastError)...)
	x.Summary = enrollmentSummary(x)
	return x, nil
}

// enrollmentFinal is the summary of an enrollment whose sequence ended.
func enrollmentFinal(e store.OpsEnrollment) (string, bool) {
	switch e.Status {
	case enrollment.Completed:
		return fmt.Sprintf("completed: all %d step(s) went out; nothing more to send", e.Steps), true
	case enrollment.Bounced, enrollment.Replied, enrollment.Unsubscribed:
		return string(e.Status) + ": the sequence stopped for good for this lead", true
	}
	return "", false
}

// enrollmentHolds lists what keeps a live enrollment's step from going out
// at now, in the order `why` prints them.
func enrollmentHolds(e store.OpsEnrollment, now time.Time) []Hold {
	holds := statusHolds(e)
	holds = append(holds, scheduleHolds(e, now)...)
	holds = append(holds, mailboxHolds(e, now)...)
	if w := newWindow(e.WindowTimezone, e.WindowDays, e.WindowStart, e.WindowEnd); !w.open(now, e.LeadTimezone) {
		local := now.In(w.location(e.LeadTimezone))
		holds = append(holds, Hold{Code: "outside_window", Detail: fmt.Sprintf(
			"outside the sending window (%s): it is %s there", w, local.Format("Mon 15:04 MST"))})
	}
	if e.LastSendStatus == enrollment.SendFailed {
		holds = append(holds, Hold{Code: "last_error", Detail: fmt.Sprintf("last send (step %d) failed: %s", e.LastSendStep, redact.String(e.LastSendError))})
	}
	return holds
}

// statusHolds: the states only an operator moves on.
func statusHolds(e store.OpsEnrollment) []Hold {
	switch e.Status {
	case enrollment.Failed:
		return []Hold{{Code: "failed", Detail: fmt.Sprintf(
			"step %d failed for good after %d attempt(s); 'rindactl requeue --status=failed' retries it", e.CurrentStep, e.Attempts)}}
	case enrollment.DeliveryUnknown:
		return []Hold{{Code: string(enrollment.DeliveryUnknown), Detail: fmt.Sprintf(
			"step %d went out through the final dot without an answer: the server may have it, so no tick sends it again; "+
				"check mailbox %s's Sent folder for its Message-ID, then 'rindactl requeue --status=delivery_unknown' to send it again, or leave it",
			e.CurrentStep, e.MailboxAddress)}}
	}
	return nil
}

// scheduleHolds: the campaign, the lease or the due time, and the address.
func scheduleHolds(e store.OpsEnrollment, now time.Time) []Hold {
	var holds []Hold
	if e.CampaignStatus != "active" {
		holds = append(holds, Hold{Code: "campaign_paused", Detail: fmt.Sprintf("campaign %s is %s", e.Campaign, e.CampaignStatus)})
	}
	if e.LockedUntil != nil && e.LockedUntil.After(now) {
		holds = append(holds, leaseHold(e.LockedBy, e.LockedUntil, now, tickkind.Email))
	} else if e.Status == enrollment.Active && e.NextSendAt.After(now) {
		at := e.NextSendAt.UTC()
		holds = append(holds, Hold{Code: "not_due", Until: &at, Detail: fmt.Sprintf("step %d is scheduled for %s", e.CurrentStep, stamp(at))})
	}
	if e.LeadEmail == "" {
		holds = append(holds, Hold{Code: "no_email", Detail: fmt.Sprintf("lead %d has no email address yet (see 'rindactl why lead %d')", e.LeadID, e.LeadID)})
	}
	if e.Suppressed != "" {
		holds = append(holds, Hold{Code: "suppressed", Detail: "the address is suppressed (" + e.Suppressed + "): it is never mailed again"})
	}
	return holds
}

// mailboxHolds: the sender mailbox's state, daily cap and human gap.
func mailboxHolds(e store.OpsEnrollment, now time.Time) []Hold {
	var holds []Hold
	switch {
	case e.MailboxID == nil:
		holds = append(holds, Hold{Code: "no_mailbox", Detail: "no sender mailbox is bound: re-run 'rindactl enroll' after adding mailboxes to the campaign"})
	case e.MailboxStatus != "active":
		holds = append(holds, Hold{Code: "mailbox_disabled", Detail: fmt.Sprintf("mailbox %s is %s", e.MailboxAddress, e.MailboxStatus)})
	case e.MailboxPausedUntil != nil && e.MailboxPausedUntil.After(now):
		detail := fmt.Sprintf("mailbox %s is paused until %s", e.MailboxAddress, stamp(*e.MailboxPausedUntil))
		if e.MailboxPauseReason != "" {
			detail += " (" + redact.String(e.MailboxPauseReason) + ")"
		}
		holds = append(holds, Hold{Code: "mailbox_paused", Until: utc(e.MailboxPausedUntil), Detail: detail})
	}
	if e.MailboxID != nil && e.MailboxCapToday > 0 && e.MailboxSent24h >= int64(e.MailboxCapToday) {
		holds = append(holds, Hold{Code: "daily_cap_reached", Detail: fmt.Sprintf(
			"mailbox %s sent %d of its daily cap of %d in the last 24 hours", e.MailboxAddress, e.MailboxSent24h, e.MailboxCapToday)})
	}
	if e.MailboxGapUntil != nil && e.MailboxGapUntil.After(now) {
		holds = append(holds, Hold{Code: "gap", Until: utc(e.MailboxGapUntil), Detail: fmt.Sprintf(
			"mailbox %s keeps its human gap between sends until %s", e.MailboxAddress, stamp(*e.MailboxGapUntil))})
	}
	return holds
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

// atCeiling: a month's spend, reservations counted, has reached its
// ceiling (nil: none).
func atCeiling(spent float64, ceiling *float64) bool {
	return ceiling != nil && spent >= *ceiling
}

// ceilingHeldInFlight: the month's spend is at the ceiling only with the
// reservations of calls in flight counted. The guard then refuses for
// store.CeilingInFlightWait, not the month, as a miss among them is refunded.
func ceilingHeldInFlight(s store.OpsSpend) bool {
	return atCeiling(s.SpentUSD, s.CeilingUSD) && s.InFlightUSD > 0 && !atCeiling(s.SpentUSD-s.InFlightUSD, s.CeilingUSD)
}
