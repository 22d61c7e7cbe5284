package sequence

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// fixture is a migrated database with one workspace, leads, a campaign over
// n mailboxes on an in-process SMTP server, and those leads enrolled.
type fixture struct {
	t    testing.TB
	pool *pgxpool.Pool
	// tickPool connects as the least-privilege tick role.
	tickPool *pgxpool.Pool
	srv      *smtptest.Server
	mailer   *Mailer
	camp     *Campaign
	id       int64
}

type fixtureOptions struct {
	leads     int
	mailboxes int
	dailyCap  int
	extraYAML string
	steps     string
	countOnly bool
	name      string
	// onAccept runs on the SMTP server after each accepted message.
	onAccept func(n int)
	// acceptDelay is how long the SMTP server takes per message.
	acceptDelay time.Duration
}

func campaignYAML(name string, srv *smtptest.Server, mailboxes, dailyCap int, steps, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace: acme\nname: %s\n%smailboxes:\n", name, extra)
	for i := 1; i <= mailboxes; i++ {
		fmt.Fprintf(&b, "  - address: sdr%02d@acme.test\n    smtp_url: %s\n    daily_cap: %d\n", i, srv.URL(""), dailyCap)
	}
	if steps == "" {
		steps = "steps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"Hello {{.FirstName}} at {{.Company}}\"\n  - delay: 72h\n    body: \"Following up\"\n"
	}
	b.WriteString(steps)
	return b.String()
}

func newFixture(t testing.TB, o fixtureOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{CountOnly: o.countOnly, OnAccept: o.onAccept, AcceptDelay: o.acceptDelay})
	f := &fixture{t: t, pool: db.Pool, tickPool: db.TickPool(t), srv: srv, mailer: NewMailer(MailerOptions{Timeout: 10 * time.Second})}
	t.Cleanup(func() { _ = f.mailer.Close() })
	if o.name == "" {
		o.name = "q4"
	}
	f.importCampaign(campaignYAML(o.name, srv, o.mailboxes, o.dailyCap, o.steps, o.extraYAML))
	f.exec(`INSERT INTO leads (workspace_id, external_id, first_name, company, email, timezone)
		SELECT w.id, 'ext-' || g, 'First' || g, 'Co' || g, 'lead' || g || '@example.test', 'UTC'
		FROM workspaces w, generate_series(1, $1) g WHERE w.name = 'acme'`, o.leads)
	if _, err := Enroll(ctx, f.pool, EnrollRequest{Workspace: "acme", Campaign: o.name}, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) importCampaign(doc string) ImportResult {
	f.t.Helper()
	c, err := ParseCampaign(strings.NewReader(doc))
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := ImportCampaign(context.Background(), f.pool, c)
	if err != nil {
		f.t.Fatal(err)
	}
	f.camp, f.id = c, res.CampaignID
	return res
}

func (f *fixture) exec(sql string, args ...any) int64 {
	f.t.Helper()
	tag, err := f.pool.Exec(context.Background(), sql, args...)
	if err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

func (f *fixture) count(sql string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (f *fixture) tick(opts TickOptions) *TickReport {
	f.t.Helper()
	opts.Mailer = f.mailer
	rep, err := RunTick(context.Background(), f.tickPool, opts)
	if err != nil {
		f.t.Fatalf("tick: %v", err)
	}
	return rep
}

// due makes every active enrollment due now (time passing).
func (f *fixture) due() {
	f.exec(`UPDATE enrollments SET next_send_at = now() - interval '1 second' WHERE status = 'active'`)
}

// rewriteAddresses does what the canonical-addresses migration does to
// rows a test wrote by hand in legacy spellings.
func (f *fixture) rewriteAddresses() {
	f.t.Helper()
	if err := store.RewriteAddresses(context.Background(), f.pool); err != nil {
		f.t.Fatal(err)
	}
}
