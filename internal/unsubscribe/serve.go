package unsubscribe

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server bounds of `rindactl unsubscribe serve`.
const (
	ReadHeaderTimeoutDefault = 5 * time.Second
	ReadTimeoutDefault       = 10 * time.Second
	WriteTimeoutDefault      = 20 * time.Second
	IdleTimeoutDefault       = 60 * time.Second
	HeaderMaxBytesDefault    = 8 << 10
	// ShutdownTimeoutDefault is how long requests in flight get after
	// SIGTERM.
	ShutdownTimeoutDefault = 10 * time.Second
)

// ServeOptions configures Serve; zero values take the defaults.
type ServeOptions struct {
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	ShutdownTimeout                                           time.Duration
	// IdleExit ends the server after this long without a connection (0:
	// never). Under systemd socket activation the socket stays open and the
	// next request starts the server again.
	IdleExit time.Duration
	Logger   *slog.Logger
}

// Serve answers on ln with h until ctx ends (SIGTERM) or IdleExit passes
// without a connection, then shuts down gracefully: no new connection,
// requests in flight finish within ShutdownTimeout. It returns nil after a
// clean shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, opts ServeOptions) error {
	opts = opts.withDefaults()
	idle := newIdleWatch(opts.IdleExit)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: opts.ReadHeaderTimeout,
		ReadTimeout:       opts.ReadTimeout,
		WriteTimeout:      opts.WriteTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    HeaderMaxBytesDefault,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
		ConnState:         idle.connState,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	opts.Logger.Info("unsubscribe server listening", "addr", ln.Addr().String())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
		opts.Logger.Info("unsubscribe server stopping", "reason", "signal")
	case <-idle.expired:
		opts.Logger.Info("unsubscribe server stopping", "reason", "idle", "idle_exit", opts.IdleExit.String())
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

func (o ServeOptions) withDefaults() ServeOptions {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&o.ReadHeaderTimeout, ReadHeaderTimeoutDefault)
	set(&o.ReadTimeout, ReadTimeoutDefault)
	set(&o.WriteTimeout, WriteTimeoutDefault)
	set(&o.IdleTimeout, IdleTimeoutDefault)
	set(&o.ShutdownTimeout, ShutdownTimeoutDefault)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// idleWatch fires expired once no connection has been open for after.
type idleWatch struct {
	after   time.Duration
	expired chan struct{}

	mu    sync.Mutex
	open  int
	timer *time.Timer
}

func newIdleWatch(after time.Duration) *idleWatch {
	w := &idleWatch{after: after, expired: make(chan struct{})}
	if after > 0 {
		w.timer = time.AfterFunc(after, w.fire)
	}
	return w
}

func (w *idleWatch) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open == 0 {
		select {
		case <-w.expired:
		default:
			close(w.expired)
		}
	}
}

func (w *idleWatch) connState(_ net.Conn, state http.ConnState) {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch state {
	case http.StateNew:
		w.open++
		w.timer.Stop()
	case http.StateClosed, http.StateHijacked:
		w.open--
		if w.open == 0 {
			w.timer.Reset(w.after)
		}
	}
}
