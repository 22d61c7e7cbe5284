package sequence

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// Phase names the step of an SMTP exchange a failure happened in.
type Phase string

const (
	// PhaseConnect: dial, TLS, greeting, EHLO, STARTTLS, AUTH.
	PhaseConnect Phase = "connect"
	PhaseMail    Phase = "mail"
	PhaseRcpt    Phase = "rcpt"
	// PhaseData: the DATA command and the message body, before the final dot.
	PhaseData Phase = "data"
	// PhaseDataEnd: the final dot and the server's answer to it. A failure
	// without an answer here leaves the delivery unknown.
	PhaseDataEnd Phase = "data_end"
)

// PhaseError is an SMTP failure and the phase it happened in.
type PhaseError struct {
	Phase Phase
	Err   error
}

func (e *PhaseError) Error() string { return string(e.Phase) + ": " + e.Err.Error() }

func (e *PhaseError) Unwrap() error { return e.Err }

// phasedConn owns the deadlines of one SMTP connection. Every write (a
// command, a chunk of the message, the final dot) starts a new phase whose
// reply must arrive within step; no deadline is ever later than hard (the
// tick's deadline plus its grace). go-mail's own SetDeadline calls are
// ignored: they restart the clock on every call, which lets a server that
// answers one byte at a time hold a connection for minutes.
type phasedConn struct {
	net.Conn
	mu   sync.Mutex
	step time.Duration
	hard time.Time
	// writeFailed: a write of the current phase failed, so its last bytes
	// (the final dot, in the data phase) never all left.
	writeFailed bool
	// read counts the bytes read since the last write, up to wireReadMax.
	read int
}

// errWireFlood: the server sent more than wireReadMax bytes without a
// command in between; the connection is dropped unread.
var errWireFlood = fmt.Errorf("the server sent more than %d bytes without waiting for a command; connection dropped", wireReadMax)

// newPhasedConn wraps raw; the first phase (the greeting) lasts first.
func newPhasedConn(raw net.Conn, step, first time.Duration, hard time.Time) *phasedConn {
	c := &phasedConn{Conn: raw, step: step, hard: hard}
	c.wait(first)
	return c
}

// wait gives the next reply d from now, keeping the step.
func (c *phasedConn) wait(d time.Duration) {
	c.mu.Lock()
	t := c.capped(time.Now().Add(d))
	c.mu.Unlock()
	_ = c.Conn.SetDeadline(t)
}

func (c *phasedConn) capped(d time.Time) time.Time {
	if !c.hard.IsZero() && c.hard.Before(d) {
		return c.hard
	}
	return d
}

// phase sets the step of the phases to come and the hard limit, and starts
// a phase now.
func (c *phasedConn) phase(step time.Duration, hard time.Time) {
	c.mu.Lock()
	c.step, c.hard, c.writeFailed = step, hard, false
	d := c.capped(time.Now().Add(step))
	c.mu.Unlock()
	_ = c.Conn.SetDeadline(d)
}

func (c *phasedConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	room := wireReadMax - c.read
	c.mu.Unlock()
	if room <= 0 {
		return 0, errWireFlood
	}
	n, err := c.Conn.Read(b[:min(len(b), room)])
	c.mu.Lock()
	c.read += n
	c.mu.Unlock()
	return n, err
}

func (c *phasedConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	d := c.capped(time.Now().Add(c.step))
	c.read = 0
	c.mu.Unlock()
	if err := c.Conn.SetDeadline(d); err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(b)
	if err != nil {
		c.mu.Lock()
		c.writeFailed = true
		c.mu.Unlock()
	}
	return n, err
}

// closeWhenDone closes the connection as soon as ctx ends, whatever phase
// it is in: a signal must not wait for a phase's deadline. The returned
// function stops watching.
func (c *phasedConn) closeWhenDone(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() { _ = c.Conn.Close() })
}

// failedWrite reports whether a write failed since the phase began.
func (c *phasedConn) failedWrite() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writeFailed
}

func (c *phasedConn) SetDeadline(time.Time) error      { return nil }
func (c *phasedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *phasedConn) SetWriteDeadline(time.Time) error { return nil }
