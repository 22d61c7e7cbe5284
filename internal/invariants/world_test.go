package invariants

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/inbox/imaptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// clock is the harness's time: the wall clock plus every shift so far. A
// stored instant s reads as s + offset in harness time (each shift moved
// the stored ones back by as much as it moved the clock forward).
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *clock) harness(stored time.Time) time.Time {
	return stored.Add(time.Duration(c.offset.Load()))
}

// world is one run's database, fake servers and processes.
type world struct {
	t      *testing.T
	rng    *rand.Rand
	db     *storetest.DB
	clock  *clock
	smtp   *fakeSMTP
	imap   *imaptest.Server
	finder []*providertest.Server
	dir    string
	// bin is the rindactl build the schedule runs (binary, or a broken
	// one: TestHarnessFindsBrokenBuilds).
	bin string

	mailboxes []string
	tickEnv   map[string]string
	ownerEnv  map[string]string

	mu   sync.Mutex
	logs []string // one line per process: what it was, how it ended
	// exit2 lists processes that exited 2 (usage): a harness mistake.
	exit2 []string
	// processes counts rindactl processes run, restarts Postgres restarts,
	// kills SIGKILLs.
	processes, restarts, kills int
	caps                       []capObservation
	providerModes              []providerModeChange
	// stopsSeen: when the harness first saw each enrollment stopped.
	stopsSeen map[int64]time.Time
}

// capObservation is every mailbox's cap in force at a harness time.
type capObservation struct {
	at   time.Time
	caps map[string]int
}

const (
	imapPassword = "invariants-imap"
	passwordEnv  = "RINDA_INVARIANTS_MAILBOX_PASSWORD"
	// Tick settings: --lease exceeds --max-duration plus the SMTP grace
	// (1s) and the provider timeout.
	tickLease       = "4s"
	providerTimeout = "1500ms"
	// stopSlack is how long after an enrollment stops (or an address is
	// suppressed) a message may still go out: a tick that claimed it before
	// sends it within its --max-duration plus the SMTP grace.
	stopSlack = 4 * time.Second
	// ceilingUSD is the workspace's monthly ceiling in one run of two
	// (roomyCeilingUSD in the other, so that enrichment goes on after the
	// first ten calls); each call costs callCostUSD, so a run reaches it.
	ceilingUSD      = "0.10"
	roomyCeilingUSD = "1.00"
	callCostUSD     = "0.01"
	callCost        = 0.01
)

// newWorld sets up one run: a database, the fake servers, a campaign over
// a few mailboxes with caps, a ramp, maybe a gap and a window, leads (some
// to enrich), enrolled and due.
func newWorld(t *testing.T, seed int64) *world {
	t.Helper()
	w := &world{t: t, rng: rand.New(rand.NewPCG(uint64(seed), 0x23)), db: storetest.New(t), clock: &clock{}, dir: t.TempDir(), bin: binary}
	var err error
	if w.smtp, err = startSMTP(w.clock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.smtp.close)
	w.imap = imaptest.New(t, nil)
	w.tickEnv = map[string]string{"DATABASE_URL": w.db.TickURL(), passwordEnv: imapPassword}
	w.ownerEnv = map[string]string{"DATABASE_URL": w.db.URL, passwordEnv: imapPassword}
	for _, p := range []*providertest.Server{providertest.NewFindymail(), providertest.NewHunter()} {
		t.Cleanup(p.Close)
		w.finder = append(w.finder, p)
		name := strings.ToUpper(p.Provider())
		for k, v := range p.Env("key-" + p.Provider()) {
			w.tickEnv[k] = v
		}
		w.tickEnv["RINDA_"+name+"_TIMEOUT"] = providerTimeout
		w.tickEnv["RINDA_"+name+"_COST_USD"] = callCostUSD
		w.tickEnv["RINDA_"+name+"_BILL_MISSES"] = "true"
		p.SetRetryAfter("2")
	}
	ceiling := w.finderConditions(seed)

	w.must("import-campaign", w.ownerEnv, "import", "campaign", w.write("campaign.yaml", w.campaignYAML()))
	w.must("import-leads", w.ownerEnv, "import", "leads", "--workspace", "acme", w.write("leads.csv", w.leadsCSV("a", 10+w.rng.IntN(30))))
	w.must("workspace-set", w.ownerEnv, "workspace", "set", "acme", "--monthly-usd-ceiling", ceiling)
	w.must("enroll", w.ownerEnv, "enroll", "--workspace", "acme", "--campaign", "c1", "--all-leads")
	// A backlog, as after an outage: due now whatever the window said.
	w.sql(`UPDATE enrollments SET next_send_at = now() - interval '2 hours', step_due_at = now() - interval '2 hours'`)
	for _, mb := range w.mailboxes {
		if err := w.imap.AddAccount(mb, imapPassword); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// finderConditions draws how the finders start: each with a latency (so a
// kill often lands while calls are in flight, and the next claim settles
// them in doubt), maybe one out of credits (so leads go down the waterfall
// to the other), and the workspace's monthly ceiling. Drawn from a source
// of their own: the schedules of the seeds drawn before them stay as they
// were.
func (w *world) finderConditions(seed int64) (ceiling string) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x39))
	for _, p := range w.finder {
		p.SetLatency([]time.Duration{0, 50 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}[rng.IntN(4)])
	}
	if out := rng.IntN(4); out < len(w.finder) {
		w.setProviderMode(w.finder[out], providertest.ModeQuotaExhausted)
	}
	return []string{ceilingUSD, roomyCeilingUSD}[rng.IntN(2)]
}

// campaignYAML draws the run's campaign: 2 to 5 mailboxes with caps of 0
// (none) to 10, one of them warming up, maybe one with a human gap, maybe
// a window (in each lead's zone, or closing within the hour), 2 or 3 steps.
func (w *world) campaignYAML() string {
	var b strings.Builder
	b.WriteString("workspace: acme\nname: c1\n")
	now := time.Now().UTC()
	switch w.rng.IntN(3) {
	case 1:
		b.WriteString("window: {timezone: lead, days: [mon, tue, wed, thu, fri], start: \"08:00\", end: \"18:00\"}\n")
	case 2:
		// Open now, shutting soon (when the hour allows a window that
		// does not cross midnight).
		if now.Hour() >= 1 && now.Hour() <= 22 {
			end := now.Add(time.Duration(5+w.rng.IntN(50)) * time.Minute)
			fmt.Fprintf(&b, "window: {timezone: UTC, days: [mon, tue, wed, thu, fri, sat, sun], start: \"00:00\", end: \"%02d:%02d\"}\n", end.Hour(), end.Minute())
		}
	}
	b.WriteString("mailboxes:\n")
	n := 2 + w.rng.IntN(4)
	ramp := w.rng.IntN(n)
	gap := -1
	if w.rng.IntN(3) == 0 {
		gap = w.rng.IntN(n)
	}
	for i := range n {
		addr := fmt.Sprintf("sdr%02d@acme.test", i+1)
		w.mailboxes = append(w.mailboxes, addr)
		u := strings.Replace(w.smtp.URL(), "smtp://", fmt.Sprintf("smtp://u%02d@", i+1), 1)
		fmt.Fprintf(&b, "  - address: %s\n    smtp_url: %s\n    password_env: %s\n    imap_url: %s\n    daily_cap: %d\n",
			addr, u, passwordEnv, w.imap.URL(addr), []int{0, 2, 3, 5, 10}[w.rng.IntN(5)])
		if i == ramp {
			fmt.Fprintf(&b, "    ramp: {start: %d, step: 1, every: 1d, max: 10}\n", 1+w.rng.IntN(3))
		}
		if i == gap {
			b.WriteString("    gap: 1s..3s\n")
		}
	}
	b.WriteString("steps:\n  - subject: \"[c1] Hi {{.FirstName}}\"\n    body: \"Hello {{.FirstName}}\"\n")
	fmt.Fprintf(&b, "  - delay: %s\n    body: \"Following up\"\n", []string{"30m", "2h", "20h"}[w.rng.IntN(3)])
	if w.rng.IntN(2) == 0 {
		b.WriteString("  - delay: 26h\n    body: \"Last note\"\n")
	}
	return b.String()
}

// timezones are the leads' zones: none (UTC, as documented), and zones on
// both sides of the date line.
var timezones = []string{"", "UTC", "America/New_York", "Asia/Seoul", "Europe/Paris", "Pacific/Auckland"}

// leadsCSV draws n leads; about a third have no address (enrichment finds
// one), a few repeat an earlier address (one campaign mails it once).
func (w *world) leadsCSV(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("external_id,first_name,last_name,company_domain,email,timezone\n")
	for i := range n {
		email := fmt.Sprintf("%s%d@lead%d.example", prefix, i, i%7)
		switch w.rng.IntN(6) {
		case 0, 1:
			email = ""
		case 2:
			if i > 0 {
				email = fmt.Sprintf(" %s%d@LEAD%d.example", prefix, i-1, (i-1)%7)
			}
		}
		fmt.Fprintf(&b, "%s-%d,Ada%d,Lovelace%d,co%d.example,%s,%s\n", prefix, i, i, i, i, email, timezones[w.rng.IntN(len(timezones))])
	}
	return b.String()
}

func (w *world) write(name, content string) string {
	w.t.Helper()
	p := filepath.Join(w.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// sql runs a statement as the owner, retrying while Postgres restarts.
func (w *world) sql(q string, args ...any) {
	w.t.Helper()
	if err := retry(func() error { _, err := w.db.Pool.Exec(context.Background(), q, args...); return err }); err != nil {
		w.t.Fatalf("%s: %v", q, err)
	}
}

// retry runs f until it succeeds, for a few seconds: the harness's own
// queries outlast a Postgres restart.
func retry(f func() error) error {
	var err error
	for range 40 {
		if err = f(); err == nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return err
}

// process is one rindactl command of a schedule.
type process struct {
	name string
	env  map[string]string
	args []string
	// start is when it starts after the epoch does; kill, when set, is
	// when it gets SIGKILL after it started.
	start, kill time.Duration
}

// must runs a set-up command that has to succeed.
func (w *world) must(name string, env map[string]string, args ...string) {
	w.t.Helper()
	code, out := w.exec(process{name: name, env: env, args: args})
	if code != 0 {
		w.t.Fatalf("%s: rindactl %s: exit %d\n%s", name, strings.Join(args, " "), code, out)
	}
}

// exec runs p to its end (or its kill) and returns its exit code (-1 when
// killed) and output.
func (w *world) exec(p process) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.bin, p.args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	keys := make([]string, 0, len(p.env))
	for k := range p.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+p.env[k])
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("%s: %v", p.name, err)
	}
	var killed atomic.Bool
	if p.kill > 0 {
		timer := time.AfterFunc(p.kill, func() {
			killed.Store(true)
			_ = cmd.Process.Kill()
		})
		defer timer.Stop()
	}
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	switch {
	case killed.Load():
		code = -1
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		w.t.Fatalf("%s: %v", p.name, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.processes++
	w.logs = append(w.logs, fmt.Sprintf("%s %s: exit %d", p.name, strings.Join(p.args, " "), code))
	if code == -1 {
		w.kills++
	}
	if code == 2 {
		w.exit2 = append(w.exit2, fmt.Sprintf("%s: rindactl %s\n%s", p.name, strings.Join(p.args, " "), lastLines(out.String(), 5)))
	}
	return code, out.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
