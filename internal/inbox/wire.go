package inbox

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

// Caps on what an IMAP server may send, checked on the bytes as they
// arrive, before the IMAP library allocates or loops over anything: a
// server over a cap has its connection dropped and its mailbox reported.
const (
	// wireLineMax bounds one line of a response outside its literals. The
	// longest line a well-behaved server sends us is a UID SEARCH answer:
	// 8 MiB lists about a million UIDs.
	wireLineMax = 8 << 20
	// wireLiteralMax bounds one literal. The one we ask for is a message's
	// first MessageBytesMax bytes; a server that ignores the partial FETCH
	// may send a bit more (a chunk of chunkSize such literals stays near
	// 12 MiB), never an endless one.
	wireLiteralMax = 4 * MessageBytesMax
	// wireResponsesMax bounds the responses to one command: a FETCH of
	// chunkSize messages or a SEARCH answers in a few dozen.
	wireResponsesMax = 10_000
	// wireCommandBytesMax bounds all the bytes answering one command
	// (chunkSize literals of wireLiteralMax and their lines, or a SEARCH
	// line of wireLineMax, fit).
	wireCommandBytesMax = 24 << 20
)

// wireLimits are the caps one connection's reads are held to.
type wireLimits struct {
	lineMax, literalMax, commandBytesMax int64
	responsesMax                         int
}

var defaultWireLimits = wireLimits{lineMax: wireLineMax, literalMax: wireLiteralMax, commandBytesMax: wireCommandBytesMax, responsesMax: wireResponsesMax}

// WireError is a server's response over a cap: the connection was dropped.
type WireError struct {
	What string // "a line", "a literal", "the answer to one command", "responses to one command"
	Size int64  // how much was seen (or announced) when the cap was passed
	Max  int64
}

func (e *WireError) Error() string {
	unit := "bytes"
	if e.What == "responses to one command" {
		unit = "responses"
	}
	return fmt.Sprintf("the IMAP server sent %s of at least %d %s, over the cap of %d: connection dropped", e.What, e.Size, unit, e.Max)
}

// wireMeter follows an IMAP server's byte stream (RFC 9051 §4: lines
// ending in CRLF, a line ending in {n} or {n+} is followed by an n-byte
// literal) and counts it against wireLimits. It keeps a few integers,
// whatever it is fed.
type wireMeter struct {
	lim wireLimits
	// line counts the bytes of the current line; literal the bytes of
	// the literal still to come.
	line, literal int64
	// tail tracks a "{digits[+]}" [CR] ending the line: tailState 0 none,
	// 1 in the digits, 2 after '}', 3 after "}\r"; tailNum the digits'
	// value (saturated at literalMax+1), tailDigits their count.
	tailState  int
	tailNum    int64
	tailDigits int
	command    int64 // bytes since the last command we sent
	responses  int   // lines ended since the last command we sent
}

// commandSent starts the count of one command's answer.
func (m *wireMeter) commandSent() { m.command, m.responses = 0, 0 }

// feed counts p; the first cap passed is returned (the same, however the
// stream is cut into reads).
func (m *wireMeter) feed(p []byte) error {
	room := m.lim.commandBytesMax - m.command
	over := int64(len(p)) > room
	if over {
		p = p[:room]
	}
	m.command += int64(len(p))
	if err := m.scan(p); err != nil {
		return err
	}
	if over {
		return &WireError{What: "the answer to one command", Size: m.lim.commandBytesMax + 1, Max: m.lim.commandBytesMax}
	}
	return nil
}

func (m *wireMeter) scan(p []byte) error {
	for len(p) > 0 {
		if m.literal > 0 {
			n := min(m.literal, int64(len(p)))
			m.literal -= n
			p = p[n:]
			continue
		}
		b := p[0]
		p = p[1:]
		m.line++
		if m.line > m.lim.lineMax {
			return &WireError{What: "a line", Size: m.line, Max: m.lim.lineMax}
		}
		if b == '\n' {
			if err := m.endLine(); err != nil {
				return err
			}
			continue
		}
		m.track(b)
	}
	return nil
}

// endLine ends a line at LF: either a literal follows or a response ended.
func (m *wireMeter) endLine() error {
	literal := m.tailState == 2 || m.tailState == 3
	size := m.tailNum
	m.line, m.tailState, m.tailNum, m.tailDigits = 0, 0, 0, 0
	if literal {
		if size > m.lim.literalMax {
			return &WireError{What: "a literal", Size: size, Max: m.lim.literalMax}
		}
		m.literal = size
		return nil
	}
	m.responses++
	if m.responses > m.lim.responsesMax {
		return &WireError{What: "responses to one command", Size: int64(m.responses), Max: int64(m.lim.responsesMax)}
	}
	return nil
}

// track follows the "{n}" or "{n+}" a line may end with.
func (m *wireMeter) track(b byte) {
	switch {
	case b == '{':
		m.tailState, m.tailNum, m.tailDigits = 1, 0, 0
	case m.tailState == 1 && b >= '0' && b <= '9':
		m.tailDigits++
		if m.tailNum <= m.lim.literalMax {
			m.tailNum = m.tailNum*10 + int64(b-'0')
		}
	case m.tailState == 1 && b == '+':
		// LITERAL+ form: still the digits' end.
	case m.tailState == 1 && b == '}' && m.tailDigits > 0:
		m.tailState = 2
	case m.tailState == 2 && b == '\r':
		m.tailState = 3
	default:
		m.tailState = 0
	}
}

// meteredConn holds a connection's reads to wireLimits. Over a cap, the
// connection is closed (the IMAP library's reader ends with it) and every
// later read fails with the WireError.
type meteredConn struct {
	net.Conn
	mu    sync.Mutex
	meter wireMeter
	err   error
}

func newMeteredConn(c net.Conn, lim wireLimits) *meteredConn {
	return &meteredConn{Conn: c, meter: wireMeter{lim: lim}}
}

func (c *meteredConn) Read(p []byte) (int, error) {
	if err := c.overCap(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = c.meter.feed(p[:n])
	}
	if c.err != nil {
		_ = c.Conn.Close()
		return 0, c.err
	}
	return n, err
}

func (c *meteredConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.meter.commandSent()
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// overCap is the cap this connection passed, if any.
func (c *meteredConn) overCap() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// wireCause prefers the cap a server passed to the error the IMAP library
// made of the dropped connection.
func wireCause(c *meteredConn, err error) error {
	if err == nil || c == nil {
		return err
	}
	var we *WireError
	if capErr := c.overCap(); capErr != nil && !errors.As(err, &we) {
		return fmt.Errorf("%w (%v)", capErr, err)
	}
	return err
}
