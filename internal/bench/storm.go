package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
	"github.com/rindactl/rindactl/internal/enrich/provider/hunter"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/store/benchstore"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Defaults of `rindactl bench storm`: the incident's enrichment as issue 26
// measured it — `enrich tick --batch 1000 --concurrency 25` in a loop,
// buckets off (a plan with high limits), Findymail out of credits and
// Hunter answering in 40 ms.
const (
	StormBatchDefault         = 1000
	StormConcurrencyDefault   = 25
	StormHunterLatencyDefault = 40 * time.Millisecond
	// StormLeadsDefault outlasts a minute of the storm at its best pace
	// (25 calls in flight at 40 ms: 625 calls/s).
	StormLeadsDefault = 60000
)

// StormConfig sets up an enrichment storm.
type StormConfig struct {
	URL string
	// Binary is the rindactl the tick processes run (required: rindabench
	// is not one).
	Binary        string
	Leads         int
	Batch         int
	Concurrency   int
	HunterLatency time.Duration
	// Schema, when set, is an existing scratch schema (another bench's,
	// e.g. an email run's) the storm loads its leads into and ticks in,
	// as one database serves both in production; "" makes its own.
	Schema string
	// Duration ends the storm; 0 runs it until ctx ends.
	Duration time.Duration
	// Running, when set, is called once the providers answered the
	// storm's first call: the storm is hot, not merely started (a first
	// tick on a loaded machine takes a while to reach its first call).
	Running func()
}

// StormResult is `rindactl bench storm --output json`: what the storm did
// from its first tick's start to its end.
type StormResult struct {
	Seconds float64 `json:"seconds"`
	Ticks   int     `json:"ticks"`
	// ProviderCalls are the requests the stand-ins answered (Hunter's and
	// Findymail's); per second and the local Postgres's CPU per call.
	ProviderCalls        int      `json:"provider_calls"`
	CallsPerSec          float64  `json:"calls_per_sec"`
	PostgresCPUPerCallUS *float64 `json:"postgres_cpu_us_per_call,omitempty"`
	// Drained: the backlog ran out, so the storm was not hot to the end.
	Drained bool `json:"drained"`
}

// Storm loads cfg.Leads due leads into a scratch schema and runs `rindactl
// enrich tick` processes one after another against in-process provider
// stand-ins (Findymail out of credits, Hunter answering in
// cfg.HunterLatency, buckets off) until cfg.Duration passes or ctx ends;
// the tick in flight then gets SIGTERM, as a scheduler stopping it would.
func Storm(ctx context.Context, cfg StormConfig) (res StormResult, err error) {
	if cfg.Leads < 1 {
		return res, fmt.Errorf("invalid --leads %d: use 1 or more", cfg.Leads)
	}
	if cfg.Binary == "" {
		return res, errors.New("bench storm: no rindactl binary to run the ticks")
	}
	cfg.Batch = cmp.Or(cfg.Batch, StormBatchDefault)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, StormConcurrencyDefault)
	s, err := stormScratch(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, s.Close(ctx)) }()
	if err := loadStormLeads(ctx, s, cfg.Leads); err != nil {
		return res, err
	}
	providers := providertest.StartAll()
	defer providers.Close()
	providers.Findymail.QuotaAfter(0) // out of credits: its real quota answer
	providers.Hunter.SetLatency(cfg.HunterLatency)

	env := stormEnv(schemaURL(cfg.URL, s.Name), providers.Env())
	args := append(tickkind.Enrich.Args(), "--batch", strconv.Itoa(cfg.Batch), "--concurrency", strconv.Itoa(cfg.Concurrency),
		"--providers", findymail.Name+","+hunter.Name, "--output", "json", "--log-level", "error")

	pm, err := Postmaster(ctx, s.Pool)
	if err != nil {
		return res, err
	}
	run := ctx
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		run, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	calls := func() int { return providers.Hunter.Count() + providers.Findymail.Count() }
	cpu, calls0, start := SampleCPU(pm), calls(), time.Now()
	if cfg.Running != nil {
		hot, cooled := context.WithCancel(run)
		defer cooled()
		go signalHot(hot, func() bool { return calls() > calls0 }, cfg.Running)
	}
	for run.Err() == nil {
		if err := stormTick(run, cfg.Binary, args, env); err != nil {
			return res, fmt.Errorf("enrich tick %d of the storm: %w", res.Ticks+1, err)
		}
		res.Ticks++
		if left, err := s.dueLeads(context.WithoutCancel(ctx)); err != nil {
			return res, err
		} else if left == 0 {
			res.Drained = true
			break
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.ProviderCalls = calls() - calls0
	res.CallsPerSec = float64(res.ProviderCalls) / res.Seconds
	if res.ProviderCalls > 0 {
		_, res.PostgresCPUPerCallUS = cpu.PerItem(SampleCPU(pm), res.ProviderCalls)
	}
	return res, nil
}

// stormScratch is the storm's schema: cfg.Schema, another bench's, or a
// scratch schema of its own.
func stormScratch(ctx context.Context, cfg StormConfig) (*scratch, error) {
	if cfg.Schema != "" {
		return borrowed(ctx, cfg.URL, cfg.Schema)
	}
	return newScratch(ctx, cfg.URL)
}

// stormEnv is the environment of the storm's ticks: this process's without
// its database URL and rindactl settings, then url, the stand-ins'
// endpoints and keys, and every bucket off.
func stormEnv(url string, providers map[string]string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "DATABASE_URL=") || strings.HasPrefix(kv, "RINDA_")
	})
	env = append(env, "DATABASE_URL="+url)
	for k, v := range providers {
		env = append(env, k+"="+v)
	}
	for _, p := range []string{hunter.Name, findymail.Name} {
		env = append(env, "RINDA_"+strings.ToUpper(p)+"_RATE=off")
	}
	return env
}

// stormTick runs one enrich tick process to its end, or until ctx ends
// (then SIGTERM: it releases what it holds, records its run and exits 0).
// first calls running once the process started.
// signalHot calls running once hot() holds, polling until ctx ends.
func signalHot(ctx context.Context, hot func() bool, running func()) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !hot() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	running()
}

func stormTick(ctx context.Context, binary string, args, env []string) error {
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	// A storm whose bench died must not tick on.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err = <-exited
	}
	if err != nil {
		return fmt.Errorf("%v: %s", err, lastLines(stderr.String(), 3))
	}
	return nil
}

// loadStormLeads queues n leads for enrichment in workspace storm.
func loadStormLeads(ctx context.Context, s *scratch, n int) error {
	if err := benchstore.BenchSeedStormLeads(ctx, s.Pool, n); err != nil {
		return fmt.Errorf("loading the storm's leads: %w", err)
	}
	return s.analyze(ctx, "leads", "lead_enrichment")
}

// dueLeads counts the leads an enrich tick could still claim.
func (s *scratch) dueLeads(ctx context.Context) (int64, error) {
	n, err := benchstore.BenchLeadsLeft(ctx, s.Pool)
	if err != nil {
		return 0, fmt.Errorf("counting due leads: %w", err)
	}
	return n, nil
}

// schemaURL is base with the scratch schema as its search_path, for
// processes that connect on their own.
func schemaURL(base, schema string) string {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		// A keyword/value string: add the setting as a keyword.
		return base + " search_path=" + schema
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// lastLines returns the last n non-empty lines of s, joined with " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
