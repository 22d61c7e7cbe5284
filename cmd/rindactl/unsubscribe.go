package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/unsubscribe"
)

func newCmdUnsubscribe(f *Factory) *cobra.Command {
	return groupCommand("unsubscribe", "One-click unsubscribe: serve the List-Unsubscribe URL, or apply a token",
		`Every message carries an unsubscribe token (List-Unsubscribe, {{.UnsubscribeURL}}).
Using it suppresses the address in its workspace and ends all its
enrollments as unsubscribed, at once. See docs/email.md, "Unsubscribe".`,
		newCmdUnsubscribeServe(f), newCmdUnsubscribeApply(f))
}

// UnsubscribeServeOptions holds the flags of `rindactl unsubscribe serve`.
type UnsubscribeServeOptions struct {
	f                 *Factory
	Listen            string
	RatePerIP         float64
	Burst             int
	TrustForwardedFor bool
	IdleExit          time.Duration
	// Getenv reads LISTEN_PID/LISTEN_FDS (systemd socket activation).
	Getenv func(string) string
}

func newCmdUnsubscribeServe(f *Factory) *cobra.Command {
	opts := &UnsubscribeServeOptions{f: f, Getenv: os.Getenv}
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR]",
		Short: "Serve the one-click unsubscribe URL (RFC 8058) over HTTP",
		Long: `Serve the unsubscribe URLs the email tick puts in List-Unsubscribe when
RINDA_UNSUBSCRIBE_BASE_URL points here (through a reverse proxy or an
Ingress that terminates TLS):

  POST .../TOKEN   the one-click request mail providers send (body
                   List-Unsubscribe=One-Click): the address is suppressed
                   in its workspace and its enrollments end as unsubscribed
  GET  .../TOKEN   a plain page with one button that sends the same POST
                   (no script, no tracking; link scanners change nothing)
  GET  /healthz    200 while the process is up

A bad token, or one used already, gets 400 and changes nothing. Each client
IP gets --rate-per-ip requests a second (bursts of --burst) before 429;
behind a proxy, --trust-forwarded-for takes the client from the last
X-Forwarded-For address. Headers are bounded (8 KiB), bodies (4 KiB) and
every phase of a request has a timeout. SIGTERM stops it gracefully.

It listens on --listen, or on the socket systemd passes when started by
socket activation ('rindactl schedule print --format systemd' writes the
.socket and .service pair); --idle-exit then lets it exit when unused, and
systemd starts it again on the next request.`,
		Example: `  rindactl unsubscribe serve --listen 127.0.0.1:8080
  rindactl unsubscribe serve --listen :8080 --trust-forwarded-for   # behind an Ingress`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return unsubscribeServeRun(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", "", "address to listen on, host:port (not with systemd socket activation)")
	fl.Float64Var(&opts.RatePerIP, "rate-per-ip", unsubscribe.RatePerIPDefault, "requests per second allowed per client IP; 0 turns the limit off")
	fl.IntVar(&opts.Burst, "burst", unsubscribe.BurstDefault, "requests one client IP may send at once")
	fl.BoolVar(&opts.TrustForwardedFor, "trust-forwarded-for", false, "the client IP is the last X-Forwarded-For address (only behind a proxy that sets it)")
	fl.DurationVar(&opts.IdleExit, "idle-exit", 0, "exit after this long without a connection (socket activation); 0 never")
	return cmd
}

func unsubscribeServeRun(ctx context.Context, opts *UnsubscribeServeOptions) error {
	switch {
	case opts.RatePerIP < 0 || opts.Burst < 1:
		return usageError("--rate-per-ip must be 0 or more and --burst at least 1")
	case opts.IdleExit < 0:
		return usageError("--idle-exit must be 0 (never) or positive")
	}
	if err := opts.f.CheckDatabaseURL(); err != nil {
		return err
	}
	ln, err := unsubscribe.SystemdListener(opts.Getenv)
	switch {
	case err != nil:
		return usageError("%v", err)
	case ln != nil && opts.Listen != "":
		ln.Close()
		return usageError("systemd passed a socket (socket activation): drop --listen %s, the .socket unit says where to listen", opts.Listen)
	case ln == nil && opts.Listen == "":
		return usageError("--listen is required (e.g. --listen 127.0.0.1:8080) unless systemd passes a socket")
	case ln == nil:
		if _, _, err := net.SplitHostPort(opts.Listen); err != nil {
			return usageError("--listen %q: use host:port, e.g. 127.0.0.1:8080 or :8080", opts.Listen)
		}
		if ln, err = net.Listen("tcp", opts.Listen); err != nil {
			return fmt.Errorf("--listen %s: %w", opts.Listen, errors.Unwrap(err))
		}
	}
	defer ln.Close()
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	var limiter *unsubscribe.IPLimiter
	if opts.RatePerIP > 0 {
		limiter = unsubscribe.NewIPLimiter(opts.RatePerIP, opts.Burst, opts.TrustForwardedFor, nil)
	}
	log := opts.f.Logger()
	h := unsubscribe.NewHandler(pool, unsubscribe.HandlerOptions{Limiter: limiter, Logger: log})
	return unsubscribe.Serve(ctx, ln, h, unsubscribe.ServeOptions{IdleExit: opts.IdleExit, Logger: log})
}

// UnsubscribeApplyOptions holds the flags of `rindactl unsubscribe apply`.
type UnsubscribeApplyOptions struct {
	f      *Factory
	Token  string
	Output string
}

func newCmdUnsubscribeApply(f *Factory) *cobra.Command {
	opts := &UnsubscribeApplyOptions{f: f}
	cmd := &cobra.Command{
		Use:   "apply TOKEN",
		Short: "Unsubscribe the recipient of a token (for a page of your own)",
		Long: `Use an unsubscribe token as the one-click POST would: suppress the address
in its workspace and end all its active enrollments as unsubscribed. For
operators who host their own unsubscribe page: give the campaign an
unsubscribe_url that carries {{.UnsubscribeToken}} and run this when the
page is used. A token works once; a bad or used token exits 2 and changes
nothing.`,
		Example: `  rindactl unsubscribe apply q2lmzk4mtd7mt4vyb3yzdvtpxa4ebxp4wayqk2yh
  rindactl unsubscribe apply "$TOKEN" --output json`,
		Args: exactArgs(1, "TOKEN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Token = args[0]
			return unsubscribeApplyRun(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func unsubscribeApplyRun(ctx context.Context, opts *UnsubscribeApplyOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if _, err := unsubscribe.Parse(opts.Token); err != nil {
		return usageError("%q is not an unsubscribe token (%d characters a-z and 2-7)", opts.Token, unsubscribe.TokenLen)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := unsubscribe.Apply(ctx, pool, opts.Token, unsubscribe.ViaApply)
	switch {
	case errors.Is(err, unsubscribe.ErrBadToken):
		return usageError("the token is not valid: it names no enrollment, or its MAC does not match; nothing changed")
	case errors.Is(err, unsubscribe.ErrReplayed):
		return usageError("the token was used already; nothing changed")
	case err != nil:
		return err
	}
	if format == cliio.FormatJSON {
		return opts.f.IO.WriteJSON(res)
	}
	suppressed := "was suppressed already"
	if res.Suppressed {
		suppressed = "is now suppressed"
	}
	fmt.Fprintf(opts.f.IO.Out, "unsubscribed: %s enrollment(s) ended; the address %s\n", cliio.Thousands(res.Ended), suppressed)
	return nil
}
