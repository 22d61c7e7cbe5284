package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/wneessen/go-mail"
	"golang.org/x/sync/errgroup"

	"github.com/rindactl/rindactl/internal/sendcap"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/benchstore"
)

// Defaults of `rindactl bench email`: the incident's 30,339 overdue steps
// over 18 mailboxes.
const (
	EmailStepsDefault     = 30339
	EmailMailboxesDefault = 18
)

// EmailConfig sets up an email-drain run.
type EmailConfig struct {
	URL       string
	Steps     int
	Mailboxes int
	// SMTPDelay is how long the SMTP server takes to accept each message
	// (both runs); 0 answers at once.
	SMTPDelay time.Duration
}

// EmailResult is `rindactl bench email --output json`: the tick's drain and
// a bare go-mail loop sending the same messages to the same server.
type EmailResult struct {
	Steps           int     `json:"steps"`
	Mailboxes       int     `json:"mailboxes"`
	Seconds         float64 `json:"seconds"`
	SendsPerSec     float64 `json:"sends_per_sec"`
	BareSeconds     float64 `json:"bare_seconds"`
	BareSendsPerSec float64 `json:"bare_sends_per_sec"`
	// Ratio is SendsPerSec / BareSendsPerSec.
	Ratio       float64 `json:"ratio"`
	SMTPDelayMS float64 `json:"smtp_delay_ms"`
	// CPU per message in microseconds (user + system): this process during
	// the tick and during the bare loop, and the server's postgres
	// processes during the tick (absent when the server is not on this
	// machine). When
	// their sum over the cores is near the tick's time per message, CPU is
	// the limit, not the database's latency.
	TickCPUPerSendUS     float64  `json:"tick_cpu_us_per_send"`
	PostgresCPUPerSendUS *float64 `json:"postgres_cpu_us_per_send,omitempty"`
	BareCPUPerSendUS     float64  `json:"bare_cpu_us_per_send"`
	// TimingPerSend is where the tick's time went, per message sent
	// (sequence.TickTiming).
	TimingPerSend sequence.TickTiming `json:"timing_ms_per_send"`
}

const (
	benchSubject = "Quick question, {{.FirstName}}"
	benchBody    = "Hi {{.FirstName}}, does {{.Company}} still do outbound by hand?"
)

// Email enrolls cfg.Steps leads with an address into a one-step campaign
// over cfg.Mailboxes mailboxes on an in-process SMTP server, times email
// ticks (sequence.RunTick) until nothing is due, then times a bare go-mail
// loop: one goroutine and one connection per mailbox, the same messages.
func Email(ctx context.Context, cfg EmailConfig) (res EmailResult, err error) {
	if cfg.Steps < 1 {
		return res, fmt.Errorf("invalid --steps %d: use 1 or more", cfg.Steps)
	}
	if cfg.Mailboxes < 1 {
		return res, fmt.Errorf("invalid --mailboxes %d: use 1 or more", cfg.Mailboxes)
	}
	if cfg.SMTPDelay < 0 {
		return res, fmt.Errorf("invalid --smtp-delay %s: use 0 or more", cfg.SMTPDelay)
	}
	srv, err := smtptest.Start(smtptest.Options{CountOnly: true, AcceptDelay: cfg.SMTPDelay})
	if err != nil {
		return res, err
	}
	defer srv.Close()
	s, err := newScratch(ctx, cfg.URL)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, s.Close(ctx)) }()

	campaign, err := loadDueSteps(ctx, s, srv.URL(""), cfg)
	if err != nil {
		return res, err
	}

	pm, err := Postmaster(ctx, s.Pool)
	if err != nil {
		return res, err
	}
	mailer := sequence.NewMailer(sequence.MailerOptions{})
	cpu0 := SampleCPU(pm)
	start := time.Now()
	timing, err := drainEmail(ctx, s.Pool, mailer, cfg.Mailboxes, cfg.Steps)
	if err != nil {
		return res, errors.Join(err, mailer.Close())
	}
	if err := mailer.Close(); err != nil {
		return res, err
	}
	res = EmailResult{TimingPerSend: timing.PerSend(cfg.Steps), Steps: cfg.Steps, Mailboxes: cfg.Mailboxes, Seconds: time.Since(start).Seconds(), SMTPDelayMS: float64(cfg.SMTPDelay) / float64(time.Millisecond)}
	res.SendsPerSec = float64(cfg.Steps) / res.Seconds
	res.TickCPUPerSendUS, res.PostgresCPUPerSendUS = cpu0.PerItem(SampleCPU(pm), cfg.Steps)

	before := srv.Accepted()
	cpu0 = SampleCPU(0) // no database in the bare loop
	start = time.Now()
	if err := bareLoop(ctx, srv, campaign, cfg); err != nil {
		return res, err
	}
	res.BareSeconds = time.Since(start).Seconds()
	res.BareCPUPerSendUS, _ = cpu0.PerItem(SampleCPU(0), cfg.Steps)
	if got := srv.Accepted() - before; got != cfg.Steps {
		return res, fmt.Errorf("bench email: the bare loop delivered %d of %d messages", got, cfg.Steps)
	}
	res.BareSendsPerSec = float64(cfg.Steps) / res.BareSeconds
	res.Ratio = res.SendsPerSec / res.BareSendsPerSec
	return res, nil
}

// drainEmail runs email ticks (concurrency mailboxes at once) until n
// steps are sent, and sums the ticks' timings.
func drainEmail(ctx context.Context, pool *pgxpool.Pool, mailer *sequence.Mailer, concurrency, n int) (timing sequence.TickTiming, err error) {
	for sent := 0; sent < n; {
		rep, err := sequence.RunTick(ctx, pool, sequence.TickOptions{Concurrency: concurrency, MaxDuration: time.Hour, Mailer: mailer})
		if err != nil {
			return timing, err
		}
		timing.Add(rep.Timing)
		if rep.Claimed == 0 {
			return timing, fmt.Errorf("bench: the email queue stopped with %d of %d steps sent (outcomes %v)", sent, n, rep.Outcomes)
		}
		sent += rep.Sent
	}
	return timing, nil
}

func mailboxAddress(i int) string { return fmt.Sprintf("sdr%02d@bench.example", i) }

// loadDueSteps imports a one-step campaign through the real import and
// enrollment code, loads the leads server-side, and makes every step due.
func loadDueSteps(ctx context.Context, s *scratch, smtpURL string, cfg EmailConfig) (*sequence.Campaign, error) {
	c, _, err := importCampaign(ctx, s, "bench", smtpURL, cfg.Mailboxes, sendcap.Cap{})
	if err != nil {
		return nil, err
	}
	if err := benchstore.BenchSeedLeadsWithEmail(ctx, s.Pool, cfg.Steps); err != nil {
		return nil, fmt.Errorf("loading leads: %w", err)
	}
	if _, err := sequence.Enroll(ctx, s.Pool, sequence.EnrollRequest{Workspace: "bench", Campaign: "bench"}, time.Now()); err != nil {
		return nil, err
	}
	if err := benchstore.BenchStepsDue(ctx, s.Pool); err != nil {
		return nil, fmt.Errorf("making the steps due: %w", err)
	}
	return c, s.analyze(ctx, "leads", "enrollments")
}

// importCampaign imports a one-step campaign named name in workspace
// bench over mailboxes sdr01.. on the SMTP server at smtpURL, through the
// real import (a second campaign reuses the mailboxes). limit.Daily, when
// above 0, is each mailbox's daily_cap.
func importCampaign(ctx context.Context, s *scratch, name, smtpURL string, mailboxes int, limit sendcap.Cap) (*sequence.Campaign, int64, error) {
	var y strings.Builder
	fmt.Fprintf(&y, "workspace: bench\nname: %s\nmailboxes:\n", name)
	for i := 1; i <= mailboxes; i++ {
		fmt.Fprintf(&y, "  - address: %s\n    smtp_url: %s\n", mailboxAddress(i), smtpURL)
		if limit.Daily > 0 {
			fmt.Fprintf(&y, "    daily_cap: %d\n", limit.Daily)
		}
	}
	fmt.Fprintf(&y, "steps:\n  - delay: 0s\n    subject: %q\n    body: %q\n", benchSubject, benchBody)
	c, err := sequence.ParseCampaign(strings.NewReader(y.String()))
	if err != nil {
		return nil, 0, err
	}
	res, err := sequence.ImportCampaign(ctx, s.Pool, c)
	return c, res.CampaignID, err
}

// bareLoop sends the same messages with go-mail and nothing else: one
// goroutine and one connection per mailbox, the Mailer's client options,
// no database.
func bareLoop(ctx context.Context, srv *smtptest.Server, c *sequence.Campaign, cfg EmailConfig) error {
	var g errgroup.Group
	for m := 1; m <= cfg.Mailboxes; m++ {
		g.Go(func() error {
			mb, _ := c.MailboxByAddress(mailboxAddress(m))
			client, err := mail.NewClient(srv.Host(), mail.WithPort(srv.Port()), mail.WithTLSPolicy(mail.TLSOpportunistic),
				mail.WithoutNoop(), mail.WithoutRset())
			if err != nil {
				return err
			}
			sc, err := client.DialToSMTPClientWithContext(ctx)
			if err != nil {
				return err
			}
			defer client.CloseWithSMTPClient(sc)
			for i := m; i <= cfg.Steps; i += cfg.Mailboxes {
				lead := sequence.Lead{FirstName: fmt.Sprintf("First%d", i), Company: fmt.Sprintf("Company %d", i%1000),
					Email: fmt.Sprintf("first%d@company%d.example", i, i%1000)}
				msg, err := c.Compose(0, lead, mb, sequence.NewMessageID(mb.Address), nil)
				if err != nil {
					return err
				}
				gm := mail.NewMsg()
				if err := gm.From(msg.From); err != nil {
					return err
				}
				if err := gm.To(msg.To); err != nil {
					return err
				}
				gm.Subject(msg.Subject)
				gm.SetMessageIDWithValue(msg.MessageID)
				gm.SetDateWithValue(time.Now())
				gm.SetBodyString(mail.TypeTextPlain, msg.Body)
				if err := client.SendWithSMTPClient(sc, gm); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}
