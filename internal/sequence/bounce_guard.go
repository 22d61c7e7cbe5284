package sequence

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// The bounce-rate guard: mailbox providers suspend an account whose mail
// hard-bounces too often, so a mailbox whose hard bounces (SMTP refusals of
// the address, and delivery reports the inbox tick matched to our sends)
// reach BounceRateMax of its last BounceWindow sends, or BounceStreakMax in
// a row, pauses itself for BouncePause with a mailbox_paused event. Limits
// are per campaign (bounce_guard in the campaign file); a mailbox in several
// campaigns takes the strictest.
const (
	BounceWindow           = 200
	BounceRateMaxDefault   = 0.03
	BounceStreakMaxDefault = 5
	BouncePause            = 24 * time.Hour
)

// BounceGuard is a campaign's limits; 0 turns one off.
type BounceGuard struct {
	RateMax   float64
	StreakMax int
}

type bounceGuardFile struct {
	Rate   string `yaml:"rate"`
	InARow *int   `yaml:"in_a_row"`
}

var bounceGuardFields = &fieldSet{keys: []string{"rate", "in_a_row"}}

func (f *bounceGuardFile) validate(path string) (BounceGuard, error) {
	g := BounceGuard{RateMax: BounceRateMaxDefault, StreakMax: BounceStreakMaxDefault}
	if f == nil {
		return g, nil
	}
	if f.Rate != "" {
		pct, ok := strings.CutSuffix(strings.TrimSpace(f.Rate), "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if !ok || err != nil || v < 0 || v > 100 || math.IsNaN(v) {
			return g, fmt.Errorf("%s.rate: %q is not a percentage such as 3%% (0%% turns the rate limit off)", path, f.Rate)
		}
		g.RateMax = v / 100
	}
	if f.InARow != nil {
		if *f.InARow < 0 {
			return g, fmt.Errorf("%s.in_a_row: %d is negative (0 turns it off)", path, *f.InARow)
		}
		g.StreakMax = *f.InARow
	}
	return g, nil
}

// bounceVerdict says whether a mailbox's bounces reach its limits, and why.
func bounceVerdict(b store.MailboxBounces) (pause bool, reason string) {
	rate := 0.0
	if b.Sends > 0 {
		rate = float64(b.Bounces) / float64(b.Sends)
	}
	// The rate is over the window, not over fewer sends: a new mailbox's
	// first bounce is not 100%.
	need := int64(math.Ceil(b.RateMax*BounceWindow - 1e-9))
	switch {
	case b.RateMax > 0 && b.Bounces >= max(need, 1):
		return true, fmt.Sprintf("bounce rate %s: %d of the last %d sends hard-bounced (limit %s of %d)",
			percent(rate), b.Bounces, b.Sends, percent(b.RateMax), BounceWindow)
	case b.StreakMax > 0 && b.Streak >= int64(b.StreakMax):
		return true, fmt.Sprintf("bounce rate %s: the last %d sends hard-bounced in a row (limit %d in a row)",
			percent(rate), b.Streak, b.StreakMax)
	}
	return false, ""
}

func percent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// BounceHalt is what the guard answers after a mailbox's bounces.
type BounceHalt struct {
	// Halt: the mailbox sends nothing until Until, paused by this call
	// (PausedHere) or before it by anyone: a tick still holding rows
	// claimed before another tick (or an operator) paused it stops too.
	// Two ticks claim an unlocked mailbox at once; the first to see the
	// limit pauses it, and before, the other sent its whole batch into
	// the bounces (issue 39).
	Halt, PausedHere bool
	Until            time.Time
}

// GuardBounces pauses mailboxID when its hard bounces (recorded and
// committed) reach its limits: BouncePause from now, a mailbox_paused
// event naming the rate, and its unsent step-1 enrollments moved to
// healthy mailboxes, in one transaction of its own. A mailbox already
// paused or disabled is left as it is, and the answer says until when.
func GuardBounces(ctx context.Context, pool *pgxpool.Pool, mailboxID int64, now time.Time, tickID string) (BounceHalt, error) {
	var halt BounceHalt
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		halt = BounceHalt{}
		b, err := store.MailboxBounceStats(ctx, tx, mailboxID, store.BounceLimits{Window: BounceWindow, RateMax: BounceRateMaxDefault, StreakMax: BounceStreakMaxDefault})
		if err != nil {
			return err
		}
		if b.Paused {
			halt = BounceHalt{Halt: true, Until: b.PausedUntil}
			return nil
		}
		pause, reason := bounceVerdict(b)
		if !pause {
			return nil
		}
		until := now.Add(BouncePause)
		if err := pauseForBounces(ctx, tx, mailboxID, b, reason, until, tickID); err != nil {
			return err
		}
		halt = BounceHalt{Halt: true, PausedHere: true, Until: until}
		return nil
	})
	if err != nil {
		return BounceHalt{}, fmt.Errorf("bounce-rate guard of mailbox %d: %w", mailboxID, err)
	}
	return halt, nil
}

func pauseForBounces(ctx context.Context, tx pgx.Tx, mailboxID int64, b store.MailboxBounces, reason string, until time.Time, tickID string) error {
	if _, _, err := store.PauseMailbox(ctx, tx, mailboxID, until, reason); err != nil {
		return err
	}
	rate := 0.0
	if b.Sends > 0 {
		rate = float64(b.Bounces) / float64(b.Sends)
	}
	payload := map[string]any{"address": b.Address, "kind": "bounce_rate", "reason": reason, "bounce_rate": rate,
		"bounces": b.Bounces, "sends": b.Sends, "in_a_row": b.Streak, "rate_max": b.RateMax, "in_a_row_max": b.StreakMax,
		"paused_until": until, "tick_id": tickID}
	key := fmt.Sprintf("mailbox_paused:%d:%d", mailboxID, until.Unix())
	if err := store.InsertEvent(ctx, tx, store.MailboxEvent{Kind: "mailbox_paused", WorkspaceID: b.WorkspaceID, MailboxID: mailboxID, DedupeKey: key, Payload: payload}); err != nil {
		return err
	}
	return rebindMailboxCampaigns(ctx, tx, mailboxID, tickID)
}
