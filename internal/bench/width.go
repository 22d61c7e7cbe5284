package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/sendcap"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/benchstore"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Defaults of `rindactl bench width`: the 1 to 16 processes, email
// over 1,000 mailboxes on a server taking 20 ms per message, enrichment
// against a provider answering in 200 ms.
const (
	WidthWindowDefault          = 15 * time.Second
	WidthMailboxesDefault       = 1000
	WidthSMTPDelayDefault       = 20 * time.Millisecond
	WidthProviderLatencyDefault = 200 * time.Millisecond
	WidthStepsDefault           = 40000
	WidthLeadsDefault           = 20000
	// widthProvider is the finder the enrichment processes use.
	widthProvider = "findymail"
)

// WidthsDefault are the process counts measured.
var WidthsDefault = []int{1, 2, 4, 8, 16}

// WidthConfig sets up a width run.
type WidthConfig struct {
	URL string
	// Binary is the rindactl the tick processes run (required).
	Binary string
	Widths []int
	Kinds  []tickkind.Kind // Email and/or Enrich
	// Window is how long each width runs; Steps and Leads are the backlog
	// loaded for it (more than a window can drain, or the row says so).
	Window    time.Duration
	Mailboxes int
	// Cap is each mailbox's (Daily 0: none). A cap in force makes every
	// claim lock the mailboxes it serves to count their room.
	Cap             sendcap.Cap
	SMTPDelay       time.Duration
	ProviderLatency time.Duration
	Steps, Leads    int
}

// WidthRow is one kind at one width.
type WidthRow struct {
	Kind      tickkind.Kind `json:"kind"`
	Processes int           `json:"processes"`
	// Rows done in the window (sent steps, enriched leads) and per second.
	Rows       int64   `json:"rows"`
	RowsPerSec float64 `json:"rows_per_sec"`
	// Drained: the backlog ran out before the window did (the rate is then
	// a floor).
	Drained             bool     `json:"drained"`
	PostgresCPUPerRowUS *float64 `json:"postgres_cpu_us_per_row,omitempty"`
	// TicksCPUPerRowUS is the tick processes' CPU per row (user + system,
	// from their start to their exit after the window, so it includes
	// their shutdown); StandInCPUPerRowUS the bench process's, which runs
	// the SMTP or provider stand-in (and samples lock waits). With
	// PostgresCPUPerRowUS they say where the CPU per row goes as processes
	// are added: on a machine whose cores are the bound, throughput is the
	// cores over their sum.
	TicksCPUPerRowUS   float64 `json:"ticks_cpu_us_per_row"`
	StandInCPUPerRowUS float64 `json:"stand_in_cpu_us_per_row"`
	// Samples of the other active backends (every 20 ms): LockShare is the
	// share of them waiting for a heavyweight lock (a row, a transaction),
	// LockWaits those samples by wait event.
	Samples   int64            `json:"samples"`
	LockShare float64          `json:"lock_share"`
	LockWaits map[string]int64 `json:"lock_waits"`
	// Guarantees after the processes stopped: every message the server
	// accepted is recorded sent (or delivery_unknown, when a process was
	// stopped after the dot), every provider call is in the ledger.
	Accepted int64 `json:"accepted,omitempty"`
	Recorded int64 `json:"recorded,omitempty"`
	Unknown  int64 `json:"delivery_unknown,omitempty"`
	// SMTPConnections the stand-in accepted: every process opens its own
	// connection to each mailbox it sends from, so messages per connection
	// fall as processes are added (each connection's greeting and EHLO is
	// work on both ends, and a TLS handshake on a real server).
	SMTPConnections int64 `json:"smtp_connections,omitempty"`
	Calls           int64 `json:"provider_requests,omitempty"`
	LedgerCalls     int64 `json:"ledger_calls,omitempty"`
	TickErrors      int   `json:"tick_errors"`
	// Ticks is how many tick processes ran in all (one ends early when it
	// finds nothing it may claim).
	Ticks int64 `json:"ticks"`
}

// Width runs, for each kind and width, that many tick processes at once
// (each starting the next tick as soon as its last ends) for cfg.Window
// against a fresh scratch schema with a backlog, and reports the
// throughput, Postgres CPU per row and lock waits.
func Width(ctx context.Context, cfg WidthConfig) ([]WidthRow, error) {
	if cfg.Binary == "" {
		return nil, errors.New("bench width: no rindactl binary to run the ticks")
	}
	var rows []WidthRow
	for _, kind := range cfg.Kinds {
		for _, w := range cfg.Widths {
			row, err := widthRun(ctx, cfg, kind, w)
			if err != nil {
				return rows, fmt.Errorf("%s at %d processes: %w", kind, w, err)
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

func widthRun(ctx context.Context, cfg WidthConfig, kind tickkind.Kind, processes int) (row WidthRow, err error) {
	row = WidthRow{Kind: kind, Processes: processes, LockWaits: map[string]int64{}}
	s, err := newScratch(ctx, cfg.URL)
	if err != nil {
		return row, err
	}
	defer func() { err = errors.Join(err, s.Close(ctx)) }()
	w := &widthBacklog{kind: kind, s: s,
		env:  append(os.Environ(), "DATABASE_URL="+s.url(cfg.URL)),
		args: append(kind.Args(), "--output", "json", "--log-level", "warn")}
	defer w.close()
	if err := w.load(ctx, cfg); err != nil {
		return row, err
	}
	if err := s.analyze(ctx, "leads", "enrollments", "lead_enrichment"); err != nil {
		return row, err
	}
	pm, err := Postmaster(ctx, s.Pool)
	if err != nil {
		return row, err
	}
	cpu := SampleCPU(pm)
	start := time.Now()
	tickErrs, err := w.drive(ctx, cfg, processes, &row)
	if err != nil {
		return row, err
	}
	defer w.stop() // on an early return; stopping twice is harmless
	n, err := w.done(ctx)
	if err != nil {
		return row, err
	}
	elapsed := time.Since(start).Seconds()
	row.Rows, row.RowsPerSec = n, float64(n)/elapsed
	row.Drained = n >= int64(w.backlog)
	row.StandInCPUPerRowUS, row.PostgresCPUPerRowUS = cpu.PerItem(SampleCPU(pm), int(max(n, 1)))
	w.stop()
	row.TicksCPUPerRowUS = cpu.ChildrenPerItem(SampleCPU(pm), int(max(n, 1)))
	row.TickErrors = len(tickErrs)
	if row.Ticks, err = benchstore.BenchTickRuns(ctx, s.Pool); err != nil {
		return row, err
	}
	if len(tickErrs) > 0 {
		return row, fmt.Errorf("%d tick(s) failed; first: %s", len(tickErrs), tickErrs[0])
	}
	return row, w.reconcile(ctx, &row)
}

// widthBacklog is one width run's backlog of one kind, the stand-in that
// works it, and the tick processes draining it.
type widthBacklog struct {
	kind      tickkind.Kind
	s         *scratch
	env, args []string
	backlog   int
	smtp      *smtptest.Server
	finder    *providertest.Server
	// stop sends SIGTERM to the ticks still running and waits for them
	// and the wait sampler; it may be called again.
	stop func()
}

func (w *widthBacklog) close() {
	if w.smtp != nil {
		w.smtp.Close()
	}
	if w.finder != nil {
		w.finder.Close()
	}
}

// load starts the kind's stand-in and loads its backlog.
func (w *widthBacklog) load(ctx context.Context, cfg WidthConfig) error {
	switch w.kind {
	case tickkind.Email:
		var err error
		if w.smtp, err = smtptest.Start(smtptest.Options{CountOnly: true, AcceptDelay: cfg.SMTPDelay}); err != nil {
			return err
		}
		_, campaign, err := importCampaign(ctx, w.s, "width", w.smtp.URL(""), cfg.Mailboxes, cfg.Cap)
		if err != nil {
			return err
		}
		mailboxes, err := benchstore.BenchMailboxIDs(ctx, w.s.Pool)
		if err != nil {
			return err
		}
		ws, err := store.WorkspaceID(ctx, w.s.Pool, "bench")
		if err != nil {
			return err
		}
		w.backlog = cfg.Steps
		return benchstore.BenchSeedRoundSteps(ctx, w.s.Pool, ws, campaign, mailboxes, cfg.Steps, "w")
	case tickkind.Enrich:
		w.finder = providertest.Start(widthProvider)
		w.finder.SetLatency(cfg.ProviderLatency)
		for k, v := range w.finder.Env(providertest.KeyDefault) {
			w.env = append(w.env, k+"="+v)
		}
		// The bucket stays on (every call takes a token in its row, the
		// write a convoy would queue on) at a rate no width reaches.
		w.env = append(w.env, "RINDA_"+strings.ToUpper(widthProvider)+"_RATE=100000/s")
		w.args = append(w.args, "--providers", widthProvider, "--nice", "0")
		ws, err := benchstore.BenchWorkspace(ctx, w.s.Pool)
		if err != nil {
			return err
		}
		w.backlog = cfg.Leads
		return benchstore.BenchSeedRoundLeads(ctx, w.s.Pool, ws, cfg.Leads, "w")
	}
	return fmt.Errorf("no width run for %s ticks", w.kind)
}

// drive runs processes tick processes in a loop for cfg.Window, sampling
// lock waits into row; it returns once the window is over (the ticks are
// still running until stop) with the failed ticks' last lines.
func (w *widthBacklog) drive(ctx context.Context, cfg WidthConfig, processes int, row *WidthRow) ([]string, error) {
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var tickErrs []string
	deadline := time.Now().Add(cfg.Window)
	for range processes {
		wg.Go(func() {
			for runCtx.Err() == nil && time.Now().Before(deadline) {
				left := time.Until(deadline).Truncate(time.Second) + time.Second
				if msg := runTick(runCtx, cfg.Binary, append(w.args, "--max-duration", left.String()), w.env); msg != "" {
					mu.Lock()
					tickErrs = append(tickErrs, msg)
					mu.Unlock()
				}
			}
		})
	}
	sampled := sampleWaits(runCtx, w.s, row)
	w.stop = func() { // SIGTERM to the ticks still running: they record and exit
		cancel()
		wg.Wait()
		<-sampled
	}
	// Sleep out the window, then count what was done inside it.
	select {
	case <-ctx.Done():
		w.stop()
		return nil, ctx.Err()
	case <-time.After(time.Until(deadline)):
	}
	return tickErrs, nil
}

// done counts the backlog's rows worked.
func (w *widthBacklog) done(ctx context.Context) (int64, error) {
	if w.kind == tickkind.Email {
		sent, _, err := benchstore.BenchSent(ctx, w.s.Pool)
		return sent, err
	}
	done, _, err := benchstore.BenchEnriched(ctx, w.s.Pool)
	return done, err
}

// reconcile checks the stand-in against the database: every message the
// SMTP server accepted is recorded sent (or delivery_unknown), every call
// the provider answered is in the ledger.
func (w *widthBacklog) reconcile(ctx context.Context, row *WidthRow) error {
	switch w.kind {
	case tickkind.Email:
		sent, unknown, err := benchstore.BenchSent(ctx, w.s.Pool)
		if err != nil {
			return err
		}
		row.Accepted, row.Recorded, row.Unknown = int64(w.smtp.Accepted()), sent, unknown
		row.SMTPConnections = int64(w.smtp.Connections())
		if row.Accepted < row.Recorded || row.Accepted > row.Recorded+row.Unknown {
			return fmt.Errorf("the SMTP server accepted %d messages, the ticks recorded %d sent and %d delivery_unknown", row.Accepted, row.Recorded, row.Unknown)
		}
	case tickkind.Enrich:
		_, calls, err := benchstore.BenchEnriched(ctx, w.s.Pool)
		if err != nil {
			return err
		}
		row.Calls, row.LedgerCalls = int64(w.finder.Count()), calls
		if row.Calls > row.LedgerCalls {
			return fmt.Errorf("the provider answered %d calls, the ledger holds %d", row.Calls, row.LedgerCalls)
		}
	}
	return nil
}

// runTick runs one tick process until it exits, sending it SIGTERM when
// ctx ends (as a scheduler stopping would). It returns the failure, if any.
func runTick(ctx context.Context, binary string, args, env []string) string {
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Sprintf("%v: %s", err, lastLine(stderr.String()))
		}
		return ""
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			return fmt.Sprintf("after SIGTERM: %v: %s", err, lastLine(stderr.String()))
		}
		return ""
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// sampleWaits samples what the other backends wait for every 20 ms until
// ctx ends, into row; the channel closes when it stopped.
func sampleWaits(ctx context.Context, s *scratch, row *WidthRow) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var lock int64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				if row.Samples > 0 {
					row.LockShare = float64(lock) / float64(row.Samples)
				}
				return
			case <-t.C:
			}
			waits, err := benchstore.BenchWaits(ctx, s.admin)
			if err != nil {
				continue // the run is ending
			}
			for _, w := range waits {
				row.Samples += w.Backends
				if w.Type == "Lock" {
					lock += w.Backends
					row.LockWaits[w.Event] += w.Backends
				}
			}
		}
	}()
	return done
}

// url is base with the scratch schema as the search_path, for processes
// that connect on their own.
func (s *scratch) url(base string) string {
	u, err := url.Parse(base)
	if err != nil || !slices.Contains([]string{"postgres", "postgresql"}, u.Scheme) {
		// A keyword/value string: add the setting as a keyword.
		return base + " search_path=" + s.Name
	}
	q := u.Query()
	q.Set("search_path", s.Name)
	u.RawQuery = q.Encode()
	return u.String()
}
