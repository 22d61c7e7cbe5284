package schedule

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"time"
)

// The unsubscribe server (`rindactl unsubscribe serve`) is the one process
// the product keeps running: systemd starts it by socket activation,
// Kubernetes runs it as a Deployment behind a Service. Crontab cannot run
// a server; its output leaves it out.

const (
	// UnsubscribeListenDefault is where the generated units have the server
	// listen: loopback, behind a reverse proxy that terminates TLS.
	UnsubscribeListenDefault = "127.0.0.1:8080"
	// UnsubscribeIdleExit is how long a socket-activated server waits
	// unused before it exits (systemd starts it again on the next request).
	UnsubscribeIdleExit = 10 * time.Minute
	// UnsubscribeShutdownTimeout is how long requests in flight get after
	// SIGTERM: unsubscribe.ShutdownTimeoutDefault.
	UnsubscribeShutdownTimeout = 10 * time.Second
)

// unsubscribeUnit is the unsubscribe server as the templates see it.
type unsubscribeUnit struct {
	Plan    Plan
	Name    string
	Listen  string   // ListenStream= of the socket
	Port    int      // the container's port
	Command string   // systemd: arguments after the binary
	Args    []string // kubernetes: the container's args
	// IdleExitSeconds, ShutdownSeconds and StopSeconds (shutdown plus a
	// margin) bound the server's life.
	IdleExitSeconds, ShutdownSeconds, StopSeconds int64
}

// listenHost is a host systemd's ListenStream= and a URL take unquoted.
var listenHost = regexp.MustCompile(`^[A-Za-z0-9.:-]*$`)

// parseListen checks an unsubscribe listen address (host:port).
func parseListen(addr string) (int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("unsubscribe listen address %q: use host:port, e.g. %s", addr, UnsubscribeListenDefault)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || !listenHost.MatchString(host) {
		return 0, fmt.Errorf("unsubscribe listen address %q: use host:port with a port 1-65535, e.g. %s", addr, UnsubscribeListenDefault)
	}
	return n, nil
}

// unsubscribeFiles renders the server's units in format; none when the
// plan has no Unsubscribe address, or for crontab.
func unsubscribeFiles(format Format, plan Plan) ([]File, error) {
	if plan.Unsubscribe == "" || format == FormatCrontab {
		return nil, nil
	}
	port, err := parseListen(plan.Unsubscribe)
	if err != nil {
		return nil, err
	}
	u := unsubscribeUnit{
		Plan: plan, Name: plan.unitName("unsubscribe"), Listen: plan.Unsubscribe, Port: port,
		Command:         "unsubscribe serve --idle-exit=" + formatSeconds(UnsubscribeIdleExit),
		Args:            []string{"unsubscribe", "serve", "--listen=:" + strconv.Itoa(port), "--trust-forwarded-for"},
		IdleExitSeconds: int64(UnsubscribeIdleExit / time.Second),
		ShutdownSeconds: int64(UnsubscribeShutdownTimeout / time.Second),
		StopSeconds:     int64(UnsubscribeShutdownTimeout/time.Second) + 5,
	}
	if format == FormatKubernetes {
		content, err := execute("kubernetes.unsubscribe.yaml.tmpl", u)
		return []File{{Name: u.Name + ".yaml", Content: content}}, err
	}
	socket, err := execute("systemd.unsubscribe.socket.tmpl", u)
	if err != nil {
		return nil, err
	}
	service, err := execute("systemd.unsubscribe.service.tmpl", u)
	if err != nil {
		return nil, err
	}
	return []File{{u.Name + ".socket", socket}, {u.Name + ".service", service}}, nil
}
