// Package pgtmp starts a throwaway Postgres cluster from the machine's
// Postgres binaries: in a temp directory, on a free loopback port, with
// durability switched off (nothing in it is meant to survive). Tests, the
// demo and scripts/pg use it, so a fresh machine needs no running server.
package pgtmp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// StartTimeoutDefault bounds how long Start waits for the server to accept
// connections.
const StartTimeoutDefault = 60 * time.Second

// InstallHint is the command that provides the binaries on Debian/Ubuntu.
const InstallHint = "apt-get install -y postgresql"

// Cluster is a running throwaway server. Stop it to remove everything.
type Cluster struct {
	// URL connects as the superuser "postgres" to the "postgres" database.
	URL  string
	Port int
	Dir  string

	cmd  *exec.Cmd
	done chan error
	// What Restart needs to start the same server again.
	bin  string
	cred *syscall.Credential
}

// Options tunes Start.
type Options struct {
	// InstallIfMissing runs apt-get when no binaries are found and the
	// process is root (CI on a fresh machine).
	InstallIfMissing bool
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
}

// binaries finds the Postgres binaries, installing them first where
// mayInstall says so and the process may (root).
func binaries(ctx context.Context, mayInstall bool, logf func(string, ...any)) (string, error) {
	bin, err := FindBinaries()
	if !errors.Is(err, errNoBinaries) || !mayInstall || os.Geteuid() != 0 {
		return bin, err
	}
	logf("no Postgres binaries found; installing with %s", InstallHint)
	if err := install(ctx); err != nil {
		return "", fmt.Errorf("installing Postgres: %w", err)
	}
	return FindBinaries()
}

// initdb creates the cluster's data directory in dir, owned by cred's
// user (nil: this process's).
func initdb(ctx context.Context, bin, dir, data string, cred *syscall.Credential) error {
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb failed: %v: %s", err, lastLines(string(out), 5))
	}
	return nil
}

// Start creates and starts a cluster. When run as root the server runs as
// the "postgres" user, since Postgres refuses to run as root.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	logf := opts.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	bin, err := binaries(ctx, opts.InstallIfMissing, logf)
	if err != nil {
		return nil, err
	}

	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "rindactl-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin, cred: cred}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	data := filepath.Join(dir, "data")
	if err := initdb(ctx, bin, dir, data, cred); err != nil {
		return nil, err
	}

	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c.Port = port
	if err := c.launch(); err != nil {
		return nil, err
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	if err := c.waitReady(ctx); err != nil {
		c.Stop()
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		return nil, fmt.Errorf("postgres did not start: %w: %s", err, lastLines(string(log), 5))
	}
	logf("postgres running on 127.0.0.1:%d (data in %s)", port, dir)
	ok = true
	return c, nil
}

func (c *Cluster) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(StartTimeoutDefault)
	for {
		select {
		case err := <-c.done:
			c.done <- err
			return fmt.Errorf("server exited: %v", err)
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgx.Connect(cctx, c.URL)
		cancel()
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// launch starts the server process on c's data directory and port.
func (c *Cluster) launch() error {
	c.done = make(chan error, 1)
	c.cmd = exec.Command(filepath.Join(c.bin, "postgres"),
		"-D", filepath.Join(c.Dir, "data"),
		"-p", strconv.Itoa(c.Port),
		"-k", c.Dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=400",
		"-c", "shared_buffers=256MB",
		"-c", "log_min_messages=fatal",
	)
	logFile, err := os.OpenFile(filepath.Join(c.Dir, "server.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	c.cmd.Stdout, c.cmd.Stderr = logFile, logFile
	// Pdeathsig: if the process that started the server dies (a killed test
	// binary), the server shuts down instead of leaking.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	done := c.done
	go func() { done <- c.cmd.Wait() }()
	return nil
}

// Restart stops the server and starts it again on the same port and data,
// dropping every connection: as a crash (immediate: SIGQUIT, recovery from
// the WAL at start) or a fast shutdown (SIGINT). Fault harnesses use it.
func (c *Cluster) Restart(ctx context.Context, immediate bool) error {
	sig := syscall.SIGINT
	if immediate {
		sig = syscall.SIGQUIT
	}
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(sig)
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
	if err := c.launch(); err != nil {
		return err
	}
	return c.waitReady(ctx)
}

// Stop shuts the server down (fast mode) and removes its directory.
func (c *Cluster) Stop() error {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
	return os.RemoveAll(c.Dir)
}

var errNoBinaries = errors.New("no Postgres server binaries found under /usr/lib/postgresql/*/bin or on PATH; install them with: " + InstallHint)

// FindBinaries returns the directory holding initdb and postgres: the newest
// /usr/lib/postgresql/<version>/bin, else wherever PATH has initdb.
func FindBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errNoBinaries
}

func versionOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// serverCredential returns the postgres user's credential when running as
// root, nil otherwise (the server then runs as the current user).
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New(`running as root needs a "postgres" system user to run the server as (it comes with: ` + InstallHint + ")")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func install(ctx context.Context) error {
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "postgresql"}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %v: %s", strings.Join(args, " "), err, lastLines(string(out), 5))
		}
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
