// Package demo replays the incident end to end: a throwaway Postgres, the
// providers, Slack and an SMTP server as in-process stand-ins, a scaled
// copy of the incident seeded through the real commands, and `enrich tick`
// and `email tick` run as separate processes round after round while
// Findymail runs out of credits. The report shows what the memo's system
// could not: email kept its pace, and the exhausted provider was left alone.
package demo

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Defaults of `rindactl demo`: a scaled copy of the incident (86k leads,
// 30,339 overdue steps, 18 mailboxes) that finishes well under a minute.
const (
	LeadsDefault     = 8600
	OverdueDefault   = 3000
	MailboxesDefault = 18
	RoundsDefault    = 6
	// IntervalDefault is the cadence of the rounds: the demo's "minute".
	IntervalDefault = 3 * time.Second
	// FindymailShareDefault is the part of the leads Findymail's remaining
	// credits cover before it answers "Not enough credits".
	FindymailShareDefault = 0.25
)

// Config sets up one demo run.
type Config struct {
	// Binary is the rindactl executable the ticks run as.
	Binary string
	// ServerURL names a Postgres server to create a scratch database on;
	// empty starts a throwaway cluster.
	ServerURL string
	Leads     int
	Overdue   int
	Mailboxes int
	Rounds    int
	Interval  time.Duration
	// TempDir is where the work directory is made; "" is os.TempDir().
	TempDir string
	// Keep leaves the work directory (CSV, campaign, child logs) and a
	// scratch database in place.
	Keep bool
	// Status receives a live one-line status (a terminal); nil for none.
	Status io.Writer
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
}

func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = IntervalDefault
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	}
	return c
}

// Validate checks the flags; its errors name the flag and the fix.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Binary == "":
		return errors.New("demo: no rindactl binary to run the ticks with")
	case c.Leads < 0 || c.Overdue < 0:
		return fmt.Errorf("--leads and --overdue cannot be negative (got %d and %d)", c.Leads, c.Overdue)
	case c.Leads+c.Overdue == 0:
		return errors.New("nothing to replay: give --leads or --overdue a positive number")
	case c.Mailboxes < 1 || c.Mailboxes > 99:
		return fmt.Errorf("invalid --mailboxes %d: use 1 to 99", c.Mailboxes)
	case c.Rounds < 1 || c.Rounds > 50:
		return fmt.Errorf("invalid --rounds %d: use 1 to 50", c.Rounds)
	case c.Interval < time.Second:
		return fmt.Errorf("invalid round interval %s: use at least 1s", c.Interval)
	}
	return nil
}

// budgets splits a round: the email tick's run, the delay between steps
// (longer than the email run, so a round never sends a step it scheduled
// itself, and short enough that it is due by the next round), and the
// enrichment tick's run.
func (c Config) budgets() (email, stepDelay, enrich time.Duration) {
	email = c.Interval / 3
	stepDelay = c.Interval / 2
	enrich = c.Interval - c.Interval/5
	return email, stepDelay, enrich
}
