package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/benchstore"
	"github.com/rindactl/rindactl/internal/tick"
)

// Defaults of `rindactl bench incident`: issue 26's replay, 18 mailboxes
// draining first steps through a server that takes 20 ms per message.
const (
	IncidentPairsDefault     = 3
	IncidentStepsDefault     = 5000
	IncidentSMTPDelayDefault = 20 * time.Millisecond
	// IncidentWarmupDefault lets the storm get hot before email starts:
	// Findymail's breaker open, Hunter answered once, 25 calls in flight.
	IncidentWarmupDefault = 3 * time.Second
)

// StormRunning is the line `rindactl bench storm` writes on stderr once its
// providers answered its first call; bench incident waits for it.
const StormRunning = "bench storm: running"

// IncidentConfig sets up the replay.
type IncidentConfig struct {
	URL string
	// Binary is the rindabench that runs `bench storm` ("": this one).
	Binary    string
	Pairs     int
	Steps     int
	Mailboxes int
	SMTPDelay time.Duration
	Warmup    time.Duration
	// Storm sets the storm's backlog and shape (its URL and Duration are
	// the replay's; its Binary, when set, is the rindactl whose enrich
	// tick the storm runs: --tick-binary).
	Storm StormConfig
}

// IncidentPair is one interleaved pair: email alone, then email while the
// storm runs beside it.
type IncidentPair struct {
	AloneSendsPerSec float64 `json:"alone_sends_per_sec"`
	StormSendsPerSec float64 `json:"storm_sends_per_sec"`
	Ratio            float64 `json:"ratio"`
	// StormCallsPerSec is the storm's pace over its whole run (warm-up
	// included).
	StormCallsPerSec float64 `json:"storm_calls_per_sec"`
	// Where each message's time went, alone and beside the storm.
	AloneTiming sequence.TickTiming `json:"alone_timing_ms_per_send"`
	StormTiming sequence.TickTiming `json:"storm_timing_ms_per_send"`
	// What each run added to the counters shared by every run (each run
	// has its own scratch schema): what a storm could leave behind to
	// slow the runs after it.
	AloneClusterAdded benchstore.ClusterStats `json:"alone_cluster_added"`
	StormClusterAdded benchstore.ClusterStats `json:"storm_cluster_added"`
}

// IncidentResult is `rindactl bench incident --output json`.
type IncidentResult struct {
	Steps       int            `json:"steps"`
	Mailboxes   int            `json:"mailboxes"`
	SMTPDelayMS float64        `json:"smtp_delay_ms"`
	Pairs       []IncidentPair `json:"pairs"`
	// The shared counters before the first run.
	ClusterAtStart benchstore.ClusterStats `json:"cluster_at_start"`
	// Summary: the median, min and max of the pairs' ratios.
	Summary PairSummary `json:"summary"`
}

// Incident replays issue 26's incident as interleaved pairs: the email tick
// drains cfg.Steps first steps over cfg.Mailboxes mailboxes (as `bench
// email` does, a fresh scratch schema each run), once alone and once while
// `rindactl bench storm` runs beside it as its own process, and reports
// each pair's rates and their ratio.
func Incident(ctx context.Context, cfg IncidentConfig) (res IncidentResult, err error) {
	cfg.Pairs = cmp.Or(cfg.Pairs, IncidentPairsDefault)
	cfg.Steps = cmp.Or(cfg.Steps, IncidentStepsDefault)
	cfg.Mailboxes = cmp.Or(cfg.Mailboxes, EmailMailboxesDefault)
	cfg.Warmup = cmp.Or(cfg.Warmup, IncidentWarmupDefault)
	if cfg.Binary == "" {
		if cfg.Binary, err = os.Executable(); err != nil {
			return res, err
		}
	}
	res = IncidentResult{Steps: cfg.Steps, Mailboxes: cfg.Mailboxes, SMTPDelayMS: float64(cfg.SMTPDelay) / float64(time.Millisecond)}
	ecfg := EmailConfig{URL: cfg.URL, Steps: cfg.Steps, Mailboxes: cfg.Mailboxes, SMTPDelay: cfg.SMTPDelay}
	admin, err := store.Open(ctx, store.Config{URL: cfg.URL, MaxConns: 1})
	if err != nil {
		return res, err
	}
	defer admin.Close()
	if res.ClusterAtStart, err = benchstore.BenchClusterStats(ctx, admin); err != nil {
		return res, err
	}
	last := res.ClusterAtStart
	// added is what the run just ended added to the shared counters.
	added := func() (benchstore.ClusterStats, error) {
		now, err := benchstore.BenchClusterStats(ctx, admin)
		d := now.Since(last)
		last = now
		return d, err
	}
	var alone, storm []float64
	for i := range cfg.Pairs {
		var p IncidentPair
		a, at, _, err := emailBeside(ctx, ecfg, nil)
		if err != nil {
			return res, fmt.Errorf("pair %d, email alone: %w", i+1, err)
		}
		if p.AloneClusterAdded, err = added(); err != nil {
			return res, err
		}
		s, stt, st, err := emailBeside(ctx, ecfg, func(schema string) (func() (StormResult, error), error) {
			return startStorm(ctx, cfg, schema)
		})
		if err != nil {
			return res, fmt.Errorf("pair %d, email beside the storm: %w", i+1, err)
		}
		if p.StormClusterAdded, err = added(); err != nil {
			return res, err
		}
		p.AloneSendsPerSec, p.StormSendsPerSec, p.Ratio, p.StormCallsPerSec = a, s, s/a, st.CallsPerSec
		p.AloneTiming, p.StormTiming = at.PerSend(cfg.Steps), stt.PerSend(cfg.Steps)
		res.Pairs = append(res.Pairs, p)
		alone, storm = append(alone, a), append(storm, s)
	}
	res.Summary, err = SummarizePairs(storm, alone)
	return res, err
}

// emailBeside times the email tick draining cfg.Steps due first steps (a
// fresh scratch schema and SMTP server) and returns its sends per second.
// beside, when set, starts something to run during the drain in the same
// schema once the steps are loaded; the function it returns stops it.
func emailBeside(ctx context.Context, cfg EmailConfig, beside func(schema string) (func() (StormResult, error), error)) (rate float64, timing sequence.TickTiming, st StormResult, err error) {
	srv, err := smtptest.Start(smtptest.Options{CountOnly: true, AcceptDelay: cfg.SMTPDelay})
	if err != nil {
		return 0, timing, st, err
	}
	defer srv.Close()
	s, err := newScratch(ctx, cfg.URL)
	if err != nil {
		return 0, timing, st, err
	}
	defer func() { err = errors.Join(err, s.Close(ctx)) }()
	if _, err := loadDueSteps(ctx, s, srv.URL(""), cfg); err != nil {
		return 0, timing, st, err
	}
	if beside != nil {
		var stop func() (StormResult, error)
		if stop, err = beside(s.Name); err != nil {
			return 0, timing, st, err
		}
		defer func() {
			var serr error
			st, serr = stop()
			err = errors.Join(err, serr)
		}()
	}
	mailer := sequence.NewMailer(sequence.MailerOptions{})
	start := time.Now()
	if timing, err = drainEmail(ctx, s.Pool, mailer, cfg.Mailboxes, cfg.Steps); err != nil {
		return 0, timing, st, errors.Join(err, mailer.Close())
	}
	rate = float64(cfg.Steps) / time.Since(start).Seconds()
	return rate, timing, st, mailer.Close()
}

// stormArgs are the arguments of `rindactl bench storm` in schema with
// sc's settings (its defaults where unset).
func stormArgs(sc StormConfig, schema string) []string {
	// --max-load 0: the storm runs beside email by design; the replay
	// checked the machine before its first pair.
	args := []string{"bench", "storm", "--schema", schema, "--output", "json", "--max-load", "0"}
	for _, f := range []struct {
		flag string
		v    int
	}{{"--leads", sc.Leads}, {"--batch", sc.Batch}, {"--concurrency", sc.Concurrency}} {
		if f.v > 0 {
			args = append(args, f.flag, strconv.Itoa(f.v))
		}
	}
	if sc.HunterLatency > 0 {
		args = append(args, "--hunter-latency", sc.HunterLatency.String())
	}
	if sc.Binary != "" {
		args = append(args, "--tick-binary", sc.Binary)
	}
	return args
}

// watchStorm reads the storm's stderr to its end: it closes running at
// the running line and returns the last three other lines, what the storm
// says on failure.
func watchStorm(stderr io.Reader, running chan<- struct{}) string {
	var tail []string
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if line := lines.Text(); line == StormRunning {
			close(running)
		} else if tail = append(tail, line); len(tail) > 3 {
			tail = tail[1:]
		}
	}
	return strings.Join(tail, " | ")
}

// startStorm starts `rindactl bench storm` as its own process in schema,
// waits until the storm's first provider call was answered and then
// cfg.Warmup, and returns the
// function that stops it (SIGTERM) and reads its report.
func startStorm(ctx context.Context, cfg IncidentConfig, schema string) (func() (StormResult, error), error) {
	cmd := exec.Command(cfg.Binary, stormArgs(cfg.Storm, schema)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+cfg.URL)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// The storm's stderr: the running line, then what it says on failure.
	running := make(chan struct{})
	said := make(chan string, 1)
	go func() { said <- watchStorm(pipe, running) }()
	exited := make(chan error, 1)
	go func() {
		tail := <-said // the pipe is read to its end before Wait closes it
		if err := cmd.Wait(); err != nil {
			exited <- fmt.Errorf("%w: %s", err, tail)
			return
		}
		exited <- nil
	}()
	stop := func() (StormResult, error) {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			return StormResult{}, fmt.Errorf("rindactl bench storm: %w", err)
		}
		var r StormResult
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			return r, fmt.Errorf("rindactl bench storm: reading its report: %w", err)
		}
		if r.Drained {
			return r, errors.New("rindactl bench storm: its backlog ran out before email was done; raise --leads")
		}
		return r, nil
	}
	select {
	case <-running:
	case err := <-exited:
		return nil, fmt.Errorf("rindactl bench storm ended before it ran: %v", err)
	case <-ctx.Done():
		_, _ = stop()
		return nil, ctx.Err()
	}
	if err := tick.Sleep(ctx, cfg.Warmup); err != nil {
		_, _ = stop()
		return nil, err
	}
	return stop, nil
}
