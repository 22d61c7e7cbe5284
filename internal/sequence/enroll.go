package sequence

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/store"
)

// ImportResult says what an import did.
type ImportResult struct {
	CampaignID int64 `json:"campaign_id"`
	Created    bool  `json:"created"`
	// Rebound counts unsent step-1 enrollments moved off a removed mailbox.
	Rebound int `json:"rebound"`
}

// ImportCampaign creates or updates a campaign in one transaction: on any
// error nothing is written.
func ImportCampaign(ctx context.Context, pool *pgxpool.Pool, c *Campaign) (ImportResult, error) {
	var res ImportResult
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		id, created, err := store.UpsertCampaign(ctx, tx, c.Record())
		if err != nil {
			return err
		}
		res.CampaignID, res.Created = id, created
		res.Rebound, err = rebindOrphans(ctx, tx, id, "")
		return err
	})
	return res, err
}

// EnrollRequest selects the leads to enroll.
type EnrollRequest struct {
	Workspace string
	Campaign  string
	// Keys are external ids or email addresses; nil enrolls every lead of
	// the workspace.
	Keys []string
}

// EnrollResult says what an enrollment did.
type EnrollResult struct {
	Enrolled int `json:"enrolled"`
	// Rebound counts unsent step-1 enrollments moved off a paused, disabled
	// or removed mailbox.
	Rebound int `json:"rebound"`
	// Unbound counts leads enrolled without a mailbox because none is
	// healthy; they are bound when one recovers and the campaign is
	// enrolled again.
	Unbound int `json:"unbound"`
	// Duplicates counts leads not enrolled because another lead of the
	// workspace with the same address (in any spelling: address.Canonical)
	// is.
	Duplicates int `json:"duplicates"`
	// Suppressed counts leads not enrolled because their address is on
	// the workspace's suppression list.
	Suppressed int `json:"suppressed"`
}

// enrollable are the candidates to enroll: not suppressed, not another
// lead's duplicate. res counts the others.
func (res *EnrollResult) enrollable(all []store.EnrollCandidate) []store.EnrollCandidate {
	var out []store.EnrollCandidate
	for _, cand := range all {
		switch {
		case cand.Suppressed:
			res.Suppressed++
		case cand.Duplicate:
			res.Duplicates++
		default:
			out = append(out, cand)
		}
	}
	return out
}

// Enroll enrolls leads in a campaign, binding each to a mailbox with the
// balanced binder and scheduling step 1 inside the window. Enrolling a lead
// twice is a no-op. The campaign row is locked, so concurrent enrollments
// bind against consistent loads.
func Enroll(ctx context.Context, pool *pgxpool.Pool, req EnrollRequest, now time.Time) (EnrollResult, error) {
	var res EnrollResult
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		campaignID, workspaceID, err := store.LockCampaign(ctx, tx, req.Workspace, req.Campaign)
		if err != nil {
			return err
		}
		rec, err := store.LoadCampaign(ctx, tx, campaignID)
		if err != nil {
			return err
		}
		c, err := campaignFromRecord(rec)
		if err != nil {
			return err
		}
		if res.Rebound, err = rebindOrphans(ctx, tx, campaignID, ""); err != nil {
			return err
		}
		var keys []string
		for _, k := range req.Keys {
			// An external id as given, or an address as leads store it.
			keys = append(keys, k, address.Key(k))
		}
		all, err := store.EnrollCandidates(ctx, tx, workspaceID, campaignID, keys)
		if err != nil {
			return err
		}
		candidates := res.enrollable(all)
		if len(candidates) == 0 {
			return nil
		}
		loads, err := store.MailboxLoads(ctx, tx, campaignID)
		if err != nil {
			return err
		}
		leadIDs := make([]string, len(candidates))
		for i, cand := range candidates {
			leadIDs[i] = strconv.FormatInt(cand.LeadID, 10)
		}
		bound := BindSenders(strconv.FormatInt(campaignID, 10), leadIDs, loads, BindingEpsilonDefault)
		rows := make([]store.NewEnrollment, len(candidates))
		for i, cand := range candidates {
			rows[i] = store.NewEnrollment{
				LeadID:     cand.LeadID,
				NextSendAt: c.Window.Next(now.Add(c.Steps[0].Delay), cand.Timezone),
				MailboxID:  bound[leadIDs[i]],
			}
			if rows[i].MailboxID == 0 {
				res.Unbound++
			}
		}
		n, err := store.InsertEnrollments(ctx, tx, campaignID, workspaceID, rows)
		res.Enrolled = int(n)
		return err
	})
	if err != nil {
		return EnrollResult{}, fmt.Errorf("enroll in %s/%s: %w", req.Workspace, req.Campaign, err)
	}
	return res, nil
}

// rebindOrphans moves the campaign's unsent step-1 enrollments off mailboxes
// that cannot send (paused, disabled, removed) onto healthy ones, with the
// same balanced binder. Enrollments that sent step 1 never move: their
// thread belongs to their mailbox.
func rebindOrphans(ctx context.Context, tx pgx.Tx, campaignID int64, tickID string) (int, error) {
	orphans, err := store.RebindCandidates(ctx, tx, campaignID, tickID)
	if err != nil || len(orphans) == 0 {
		return 0, err
	}
	loads, err := store.MailboxLoads(ctx, tx, campaignID)
	if err != nil {
		return 0, err
	}
	leadIDs := make([]string, len(orphans))
	for i, o := range orphans {
		leadIDs[i] = strconv.FormatInt(o.LeadID, 10)
	}
	bound := BindSenders(strconv.FormatInt(campaignID, 10), leadIDs, loads, BindingEpsilonDefault)
	var enrollmentIDs, mailboxIDs []int64
	for i, o := range orphans {
		if mb, ok := bound[leadIDs[i]]; ok {
			enrollmentIDs, mailboxIDs = append(enrollmentIDs, o.EnrollmentID), append(mailboxIDs, mb)
		}
	}
	if len(enrollmentIDs) == 0 {
		return 0, nil
	}
	return len(enrollmentIDs), store.RebindEnrollments(ctx, tx, enrollmentIDs, mailboxIDs)
}
