package unsubscribe

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
)

// listenFDsStart is the first file descriptor systemd passes (sd_listen_fds).
const listenFDsStart = 3

// SystemdListener returns the socket systemd passed to this process by
// socket activation (LISTEN_PID is this process, LISTEN_FDS at least 1),
// or nil when there is none. getenv reads the environment.
func SystemdListener(getenv func(string) string) (net.Listener, error) {
	pid, err := strconv.Atoi(getenv("LISTEN_PID"))
	if err != nil || pid != os.Getpid() {
		return nil, nil
	}
	n, err := strconv.Atoi(getenv("LISTEN_FDS"))
	if err != nil || n < 1 {
		return nil, nil
	}
	if n > 1 {
		return nil, fmt.Errorf("systemd passed %d sockets; the unsubscribe server takes one (one ListenStream= in its .socket unit)", n)
	}
	syscall.CloseOnExec(listenFDsStart)
	f := os.NewFile(listenFDsStart, "systemd-socket")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("the socket systemd passed (fd %d): %w", listenFDsStart, err)
	}
	return ln, nil
}
