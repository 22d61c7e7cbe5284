package invariants

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/inbox/imaptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// providerModes are the faults the provider stand-ins switch between: out
// of credits, 429 with a short Retry-After, slow.
var providerModes = []providertest.Mode{providertest.ModeHealthy, providertest.ModeHealthy,
	providertest.ModeQuotaExhausted, providertest.ModeRateLimited, providertest.ModeSlow}

// timeShifts are how far the clock may jump between epochs.
var timeShifts = []time.Duration{10 * time.Second, 5 * time.Minute, time.Hour, 6 * time.Hour, 25 * time.Hour}

// schedule runs the world's seeded schedule: epochs of processes at once,
// each maybe killed, with faults switched and Postgres restarted under
// them, then replies, bounces and a time shift between epochs; then the
// recovery (healthy servers, every lease run out, clean ticks).
func (w *world) schedule() {
	epochs := 3 + w.rng.IntN(4)
	for e := range epochs {
		w.epoch(e)
		w.observeCaps()
		w.observeStops()
		w.between()
	}
	w.recover()
	w.observeCaps()
}

func (w *world) epoch(e int) {
	var procs []process
	dur := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(w.rng.Int64N(int64(hi-lo))) }
	maybeKill := func(p process) process {
		p.start = dur(0, 400*time.Millisecond)
		if w.rng.IntN(10) < 3 {
			p.kill = dur(30*time.Millisecond, 1500*time.Millisecond)
		}
		return p
	}
	for i := range 1 + w.rng.IntN(width) {
		procs = append(procs, maybeKill(process{name: fmt.Sprintf("email-tick-%d.%d", e, i), env: w.tickEnv, args: []string{
			"email", "tick", "--batch", strconv.Itoa([]int{1, 2, 3, 10, 500}[w.rng.IntN(5)]),
			"--concurrency", strconv.Itoa([]int{1, 2, 18}[w.rng.IntN(3)]),
			"--max-duration", []string{"700ms", "1500ms"}[w.rng.IntN(2)], "--lease", tickLease, "--output", "json"}}))
	}
	if w.rng.IntN(2) == 0 {
		procs = append(procs, maybeKill(process{name: fmt.Sprintf("inbox-tick-%d", e), env: w.tickEnv,
			args: []string{"inbox", "tick", "--max-duration", "1s", "--lease", tickLease}}))
	}
	if w.rng.IntN(2) == 0 {
		n := 1
		if width > widthDefault { // the default's schedules draw no count
			n = 1 + w.rng.IntN(width)
		}
		for i := range n {
			procs = append(procs, maybeKill(process{name: fmt.Sprintf("enrich-tick-%d.%d", e, i), env: w.tickEnv,
				args: []string{"enrich", "tick", "--max-duration", "1s", "--lease", "5s", "--batch", "20", "--concurrency", "4", "--nice", "0"}}))
		}
	}
	if w.rng.IntN(5) == 0 {
		// delivery_unknown is left out: requeuing it says "not delivered",
		// which only an operator who checked the Sent folder may say.
		status := []string{"unreachable", "enrichment_failed", "failed"}[w.rng.IntN(3)]
		procs = append(procs, maybeKill(process{name: fmt.Sprintf("requeue-%d", e), env: w.ownerEnv,
			args: []string{"requeue", "--status=" + status, "--yes"}}))
	}
	if w.rng.IntN(5) == 0 {
		procs = append(procs, maybeKill(process{name: fmt.Sprintf("import-leads-%d", e), env: w.ownerEnv,
			args: []string{"import", "leads", "--workspace", "acme", w.write(fmt.Sprintf("leads-%d.csv", e), w.leadsCSV(fmt.Sprintf("e%d-", e), 3+w.rng.IntN(6)))}}))
	}
	if w.rng.IntN(3) == 0 {
		procs = append(procs, maybeKill(process{name: fmt.Sprintf("enroll-%d", e), env: w.ownerEnv,
			args: []string{"enroll", "--workspace", "acme", "--campaign", "c1", "--all-leads"}}))
	}
	if mark, n, how := w.rng.IntN(3) == 0, 1+w.rng.IntN(2), []string{"--replied", "--unsubscribed"}[w.rng.IntN(2)]; mark {
		if ids := w.someEnrollments(n); len(ids) > 0 {
			procs = append(procs, maybeKill(process{name: fmt.Sprintf("mark-%d", e), env: w.ownerEnv,
				args: append([]string{"enrollment", "mark", how}, ids...)}))
		}
	}

	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(p.start)
			w.exec(p)
		}()
	}
	// Faults switched while they run.
	if w.rng.IntN(10) < 6 {
		at, mode := dur(0, time.Second), smtpModes[w.rng.IntN(len(smtpModes))]
		wg.Add(1)
		go func() { defer wg.Done(); time.Sleep(at); w.smtp.setMode(mode) }()
	}
	if w.rng.IntN(2) == 0 {
		at, p, mode := dur(0, time.Second), w.finder[w.rng.IntN(len(w.finder))], providerModes[w.rng.IntN(len(providerModes))]
		wg.Add(1)
		go func() { defer wg.Done(); time.Sleep(at); w.setProviderMode(p, mode) }()
	}
	if w.rng.IntN(8) == 0 {
		at, immediate := dur(100*time.Millisecond, 1200*time.Millisecond), w.rng.IntN(2) == 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(at)
			if err := cluster.Restart(context.Background(), immediate); err != nil {
				w.t.Errorf("restarting Postgres: %v", err)
			}
			w.mu.Lock()
			w.restarts++
			w.logs = append(w.logs, fmt.Sprintf("postgres restarted (immediate %v) at +%s", immediate, at))
			w.mu.Unlock()
		}()
	}
	wg.Wait()
}

// someEnrollments draws n active enrollment ids for `enrollment mark`.
func (w *world) someEnrollments(n int) []string {
	// Drawn before the query: the schedule's draws do not depend on what
	// the database holds, so a seed replays the same schedule.
	picks := make([]uint64, n)
	for i := range picks {
		picks[i] = w.rng.Uint64()
	}
	var ids []string
	_ = retry(func() error {
		rows, err := w.db.Pool.Query(context.Background(), `SELECT id::text FROM enrollments WHERE status = 'active' ORDER BY id`)
		if err != nil {
			return err
		}
		all := []string{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			all = append(all, id)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		ids = nil
		for _, r := range picks {
			if len(all) > 0 {
				ids = append(ids, all[r%uint64(len(all))])
			}
		}
		return nil
	})
	return ids
}

// between is what happens between epochs: leads answer (a reply or a
// bounce in the mailbox's INBOX for the inbox tick to read), and time
// moves forward.
func (w *world) between() {
	answer, n := w.rng.IntN(5) < 2, 1+w.rng.IntN(2)
	picks, samples := [2]uint64{w.rng.Uint64(), w.rng.Uint64()}, [2]int{w.rng.IntN(3), w.rng.IntN(3)}
	if sent := w.smtp.deliveries(); len(sent) > 0 && answer {
		for i := range n {
			d := sent[picks[i]%uint64(len(sent))]
			sample := []string{"gmail-reply.eml", "postfix-bounce.eml", "m365-reply.eml"}[samples[i]]
			msg := imaptest.Sample(sample, imaptest.Fill{MessageID: d.MessageID, Mailbox: d.From, Recipient: d.To})
			if err := w.imap.Deliver(d.From, msg); err != nil {
				w.t.Fatalf("delivering a reply to %s: %v", d.From, err)
			}
		}
	}
	if w.rng.IntN(10) < 6 {
		w.shift(timeShifts[w.rng.IntN(len(timeShifts))])
	}
}

// shift moves time forward by d: the database's stored instants back, the
// harness clock forward. No process runs meanwhile.
func (w *world) shift(d time.Duration) {
	if err := retry(func() error { return storetest.ShiftTimeBy(context.Background(), w.db.Pool, d) }); err != nil {
		w.t.Fatalf("shifting time by %s: %v", d, err)
	}
	w.clock.offset.Add(int64(d))
	w.mu.Lock()
	w.logs = append(w.logs, "time moves forward "+d.String())
	w.mu.Unlock()
}

// recover ends a run: every server healthy, every lease run out, then
// ticks that are not killed, so every claimed row can be recorded.
func (w *world) recover() {
	w.smtp.setMode(smtpOK)
	for _, p := range w.finder {
		w.setProviderMode(p, providertest.ModeHealthy)
	}
	w.shift(10 * time.Minute)
	for i := range 2 {
		for _, p := range []process{
			{name: fmt.Sprintf("recover-email-%d", i), env: w.tickEnv, args: []string{"email", "tick", "--max-duration", "3s", "--lease", "10s"}},
			{name: fmt.Sprintf("recover-inbox-%d", i), env: w.tickEnv, args: []string{"inbox", "tick", "--max-duration", "2s", "--lease", "10s"}},
			{name: fmt.Sprintf("recover-enrich-%d", i), env: w.tickEnv, args: []string{"enrich", "tick", "--max-duration", "2s", "--lease", "10s", "--nice", "0"}},
		} {
			if code, out := w.exec(p); code != 0 {
				w.t.Errorf("%s: exit %d after recovery\n%s", p.name, code, lastLines(out, 5))
			}
		}
	}
}

// observeCaps records each mailbox's cap in force now: a ramp only grows,
// so a cap observed after a delivery bounds the cap in force at it.
func (w *world) observeCaps() {
	_ = retry(func() error {
		rows, err := w.db.Pool.Query(context.Background(), `SELECT address, cap_today FROM mailboxes`)
		if err != nil {
			return err
		}
		at := w.clock.now()
		caps := map[string]int{}
		for rows.Next() {
			var a string
			var c int
			if err := rows.Scan(&a, &c); err != nil {
				return err
			}
			caps[a] = c
		}
		if err := rows.Err(); err != nil {
			return err
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.caps = append(w.caps, capObservation{at: at, caps: caps})
		return nil
	})
}

// observeStops notes, for each enrollment first seen replied,
// unsubscribed or bounced, when the harness saw it so: its stop happened
// by then. The row's updated_at alone cannot tell, since later writes
// (a tick settling a row it holds) move it.
func (w *world) observeStops() {
	_ = retry(func() error {
		rows, err := w.db.Pool.Query(context.Background(), `SELECT id FROM enrollments WHERE status IN ('replied', 'unsubscribed', 'bounced')`)
		if err != nil {
			return err
		}
		at := w.clock.now()
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.stopsSeen == nil {
			w.stopsSeen = map[int64]time.Time{}
		}
		for _, id := range ids {
			if _, ok := w.stopsSeen[id]; !ok {
				w.stopsSeen[id] = at
			}
		}
		return nil
	})
}

// setProviderMode switches a provider stand-in and records when.
func (w *world) setProviderMode(p *providertest.Server, m providertest.Mode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p.SetMode(m)
	w.providerModes = append(w.providerModes, providerModeChange{at: w.clock.now(), provider: p.Provider(), mode: string(m)})
}
