package schedule

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/rindactl/rindactl/internal/tickkind"
)

// Job is one kind of tick the Runner fires on its spec, as a child process.
type Job struct {
	Kind tickkind.Kind
	Spec Spec
	Argv []string // the child's binary and arguments
}

// Runner is a foreground scheduler for hosts without cron. Every firing runs
// as a child process, never in-process: a tick that hangs or floods its
// provider can then never starve another kind (the incident's lesson).
type Runner struct {
	Jobs []Job
	// ShutdownTimeout bounds how long children get to exit after the
	// forwarded signal before they are killed; ShutdownTimeoutDefault if zero.
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
	// Stdout and Stderr receive the children's output (their JSON log lines);
	// nil discards it.
	Stdout, Stderr io.Writer
	// Env is the children's environment; nil inherits this process's.
	Env []string
}

// Run fires the jobs until a signal arrives on signals. A firing is skipped
// while the previous run of its kind is still going. On the signal, Run stops
// firing, forwards the signal to every child's process group, waits up to
// ShutdownTimeout, kills what is left, and returns. It returns an error only
// when it cannot run at all; failed ticks are logged and the next firing runs.
func (r *Runner) Run(signals <-chan os.Signal) error {
	if len(r.Jobs) == 0 {
		return errors.New("no ticks to run; give at least one spec")
	}
	for _, j := range r.Jobs {
		if len(j.Argv) == 0 {
			return fmt.Errorf("%s tick: no command to run", j.Kind)
		}
	}
	timeout := r.ShutdownTimeout
	if timeout <= 0 {
		timeout = ShutdownTimeoutDefault
	}
	logger := r.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &supervisor{logger: logger, stdout: r.Stdout, stderr: r.Stderr, env: r.Env, children: map[int]tickkind.Kind{}}

	c := cron.New(cron.WithLogger(cron.DiscardLogger))
	for _, j := range r.Jobs {
		var slot slot
		c.Schedule(j.Spec.Schedule(), cron.FuncJob(func() { s.fire(j, &slot) }))
		logger.Info("tick scheduled", "kind", j.Kind, "spec", j.Spec.String())
	}
	c.Start()

	sig := <-signals
	logger.Info("stopping: forwarding signal to running ticks", "signal", sig.String(), "shutdown_timeout", timeout.String())
	s.stop(sig)
	done := c.Stop().Done() // closed once every running firing has reaped its child
	select {
	case <-done:
	case <-time.After(timeout):
		s.kill()
		<-done
	}
	logger.Info("stopped")
	return nil
}

// slot tracks the one run a kind may have: 0 idle, -1 starting, else its pid.
type slot struct{ pid atomic.Int64 }

// supervisor is the state of one Run: the children alive and whether
// shutdown has begun, so no child starts after the signal was forwarded.
type supervisor struct {
	logger         *slog.Logger
	stdout, stderr io.Writer
	env            []string

	mu       sync.Mutex
	stopping bool
	// forwarded is the signal the shutdown sent the children.
	forwarded syscall.Signal
	children  map[int]tickkind.Kind // pid (and process group) of each running child
}

func (s *supervisor) fire(j Job, sl *slot) {
	log := s.logger.With("kind", j.Kind)
	if !sl.pid.CompareAndSwap(0, -1) {
		log.Warn("skipping firing: previous run still running", "pid", sl.pid.Load())
		return
	}
	defer sl.pid.Store(0)

	cmd := exec.Command(j.Argv[0], j.Argv[1:]...)
	cmd.Stdout, cmd.Stderr = s.stdout, s.stderr
	cmd.Env = s.env
	// Its own process group: a terminal's Ctrl-C reaches the child once, via
	// us, and a kill reaches whatever the child started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second

	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return
	}
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		log.Error("cannot start tick", "command", j.Argv[0], "err", err)
		return
	}
	pid := cmd.Process.Pid
	s.children[pid] = j.Kind
	s.mu.Unlock()
	sl.pid.Store(int64(pid))

	started := time.Now()
	log.Info("tick started", "pid", pid)
	err := cmd.Wait()
	s.mu.Lock()
	delete(s.children, pid)
	s.mu.Unlock()

	attrs := []any{"pid", pid, "duration_ms", time.Since(started).Milliseconds(), "exit_code", cmd.ProcessState.ExitCode()}
	switch {
	case err == nil:
		log.Info("tick finished", attrs...)
	case s.endedByShutdown(cmd.ProcessState):
		// A tick that had only just started when the shutdown reached it
		// dies of the forwarded signal before its own handler is set: it
		// had done nothing, so it did not fail.
		log.Info("tick stopped by the shutdown's signal before it could handle it", append(attrs, "err", err)...)
	default:
		log.Warn("tick failed", append(attrs, "err", err)...)
	}
}

// endedByShutdown reports whether a child died of the signal the shutdown
// forwarded to it.
func (s *supervisor) endedByShutdown(ps *os.ProcessState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && s.stopping && ws.Signaled() && ws.Signal() == s.forwarded
}

// stop marks shutdown and forwards sig to every child's process group.
func (s *supervisor) stop(sig os.Signal) {
	signum, ok := sig.(syscall.Signal)
	if !ok {
		signum = syscall.SIGTERM
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping = true
	s.forwarded = signum
	for pid, kind := range s.children {
		if err := syscall.Kill(-pid, signum); err != nil && !errors.Is(err, syscall.ESRCH) {
			s.logger.Warn("cannot signal tick", "kind", kind, "pid", pid, "err", err)
		}
	}
}

// kill ends every child still running after the shutdown timeout.
func (s *supervisor) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid, kind := range s.children {
		s.logger.Warn("killing tick still running after shutdown timeout", "kind", kind, "pid", pid)
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			s.logger.Warn("cannot kill tick", "kind", kind, "pid", pid, "err", err)
		}
	}
}
