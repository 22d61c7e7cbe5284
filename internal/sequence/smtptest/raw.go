package smtptest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/redact/redacttest"
)

// AfterDot is what a Raw server does once the final dot of a message has
// arrived.
type AfterDot string

const (
	// AfterDotReply answers with RawOptions.Replies[StageData], or 250.
	AfterDotReply AfterDot = ""
	// AfterDotDrop closes the connection without an answer: the server has
	// the whole message, the client cannot know.
	AfterDotDrop AfterDot = "drop"
	// AfterDotHang never answers: the server stalls with the whole
	// message, and the client waits until its own deadline (or a signal)
	// cuts the session. DotReceived tells when the dot is in.
	AfterDotHang AfterDot = "hang"
)

// RawOptions scripts a Raw server.
type RawOptions struct {
	// NoGreeting accepts connections and never says anything.
	NoGreeting bool
	// Greeting is the first reply, "220 raw.smtptest ESMTP" when empty. A
	// 4xx or 5xx greeting is sent and the connection closed.
	Greeting string
	// ByteDelay sends every reply one byte at a time, this far apart.
	ByteDelay time.Duration
	// Enhanced advertises ENHANCEDSTATUSCODES. Replies are sent exactly as
	// scripted either way: real servers that do not advertise it still put
	// "5.4.5" in their text.
	Enhanced bool
	// Replies are full reply lines per stage ("550 5.4.5 Daily user
	// sending quota exceeded."); StageData is the answer to the final dot.
	// Stages without one are accepted.
	Replies map[Stage]string
	// AfterDot says what happens when a message's final dot arrives.
	AfterDot AfterDot
	// TLS, when set, speaks TLS from the first byte (smtps://).
	TLS *tls.Config
	// StartTLS, when set, offers STARTTLS in the EHLO reply and upgrades
	// the connection with it.
	StartTLS *tls.Config
	// StripStartTLS leaves STARTTLS out of the EHLO reply (and refuses the
	// command) although StartTLS is set: what a downgrade attacker on the
	// path, or a misconfigured server, shows the client.
	StripStartTLS bool
	// RequireFQDN refuses an EHLO/HELO name that is neither a fully
	// qualified domain name nor an address literal, as Postfix with
	// reject_non_fqdn_helo_hostname does: "504 5.5.2 <vm>: Helo command
	// rejected: need fully-qualified hostname".
	RequireFQDN bool
	// Flood, when set, answers its stage with a reply that does not end
	// (a hostile or broken server).
	Flood *Flood
	// AuthEcho answers AUTH with a 535 that repeats what the client sent:
	// the base64 blob, and the password decoded from it, literal and in
	// every spelling of redacttest.Spellings (percent-encoded every way,
	// JSON, HTML references, quoted-printable, base64 and base64url):
	// servers that log credentials back.
	AuthEcho bool
}

// Flood is a reply that goes on: Line repeated (each time with CRLF) until
// Bytes were written, then Last, if the client still listens; Delay
// between lines. StageData floods the answer to the final dot.
type Flood struct {
	Stage Stage
	Line  string
	Bytes int64
	Last  string
	Delay time.Duration
}

// Raw is a hand-written SMTP server on 127.0.0.1 for the behaviours a real
// server library will not produce: no greeting, a 421 greeting, replies one
// byte at a time, silence or a dropped connection after the final dot, and
// no ENHANCEDSTATUSCODES.
type Raw struct {
	opts     RawOptions
	listener net.Listener
	quit     chan struct{}
	wg       sync.WaitGroup

	tally
	written  int64 // bytes sent to clients
	conns    map[net.Conn]bool
	received []Message
	refused  map[int]bool // indexes into received answered 4xx/5xx
	auths    int
	helos    []string
	// dot is closed when the first message's final dot has arrived.
	dot chan struct{}
}

// NewRaw starts a Raw server for a test and closes it when the test ends.
func NewRaw(tb testing.TB, opts RawOptions) *Raw {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	if opts.TLS != nil {
		l = tls.NewListener(l, opts.TLS)
	}
	s := &Raw{opts: opts, listener: l, quit: make(chan struct{}), conns: map[net.Conn]bool{}, refused: map[int]bool{}, dot: make(chan struct{})}
	s.wg.Add(1)
	go s.serve()
	tb.Cleanup(s.Close)
	return s
}

// URL is an smtp:// URL for this server (smtps:// with TLS).
func (s *Raw) URL() string {
	if s.opts.TLS != nil {
		return "smtps://" + s.listener.Addr().String()
	}
	return "smtp://" + s.listener.Addr().String()
}

// Close stops the server and drops open connections.
func (s *Raw) Close() {
	s.mu.Lock()
	select {
	case <-s.quit:
		s.mu.Unlock()
		return
	default:
	}
	close(s.quit)
	_ = s.listener.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Received returns every message whose final dot arrived, answered or not:
// the server has each of them, so a second copy is a duplicate delivery.
func (s *Raw) Received() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.received...)
}

// Delivered returns the received messages the server did not refuse:
// accepted, or left without an answer (the client cannot know).
func (s *Raw) Delivered() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for i, m := range s.received {
		if !s.refused[i] {
			out = append(out, m)
		}
	}
	return out
}

// DotReceived is closed once the first message's final dot has arrived:
// from then on the server has a message, whatever it answers.
func (s *Raw) DotReceived() <-chan struct{} { return s.dot }

// Helos lists the names clients announced in EHLO/HELO, in order.
func (s *Raw) Helos() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.helos...)
}

// Written counts the bytes the server has sent to clients: what a client
// that reads a flooding reply to its end would hold.
func (s *Raw) Written() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// Auths counts AUTH commands.
func (s *Raw) Auths() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auths
}

func (s *Raw) serve() {
	defer s.wg.Done()
	for {
		c, err := s.listener.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.connections++
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				_ = c.Close()
			}()
			s.session(c)
		}()
	}
}

func (s *Raw) write(c net.Conn, line string) bool {
	b := []byte(line + "\r\n")
	if s.opts.ByteDelay <= 0 {
		n, err := c.Write(b)
		s.mu.Lock()
		s.written += int64(n)
		s.mu.Unlock()
		return err == nil
	}
	for i := range b {
		select {
		case <-s.quit:
			return false
		case <-time.After(s.opts.ByteDelay):
		}
		if _, err := c.Write(b[i : i+1]); err != nil {
			return false
		}
	}
	return true
}

// flood writes the Flood reply; false when the client went away.
func (s *Raw) flood(c net.Conn) bool {
	f := s.opts.Flood
	// Lines go out in chunks: one write per line would make the flood
	// slower than the client's reading.
	chunk := strings.Repeat(f.Line+"\r\n", max(1, 64<<10/(len(f.Line)+2)))
	if f.Delay > 0 {
		chunk = f.Line + "\r\n"
	}
	for sent := int64(0); sent < f.Bytes; sent += int64(len(chunk)) {
		select {
		case <-s.quit:
			return false
		case <-time.After(f.Delay):
		}
		if !s.write(c, strings.TrimSuffix(chunk, "\r\n")) {
			return false
		}
	}
	return s.write(c, f.Last)
}

// reply answers stage: its Flood, its scripted reply or ok.
func (s *Raw) answer(c net.Conn, stage Stage, ok string) bool {
	if s.opts.Flood != nil && s.opts.Flood.Stage == stage {
		return s.flood(c)
	}
	return s.reply(c, stage, ok)
}

// authEcho is the 535 of a server that repeats the credentials it got.
func authEcho(arg string) string {
	_, blob, _ := strings.Cut(arg, " ")
	b, _ := base64.StdEncoding.DecodeString(blob)
	parts := strings.Split(string(b), "\x00")
	password := parts[len(parts)-1]
	j, _ := json.Marshal(password)
	echoes := []string{blob, password, url.QueryEscape(password), url.PathEscape(password), string(j)}
	// Issue 37: and every other encoding a server may log it back in,
	// each on the one reply line (no soft line breaks here).
	spellings := redacttest.Spellings(parts[0], password)
	for _, name := range slices.Sorted(maps.Keys(spellings)) {
		if !strings.ContainsAny(spellings[name], "\r\n") {
			echoes = append(echoes, spellings[name])
		}
	}
	return "535 5.7.8 Authentication failed for " + strings.Join(echoes, ", ")
}

// hang waits until the server closes.
func (s *Raw) hang() { <-s.quit }

func (s *Raw) reply(c net.Conn, stage Stage, ok string) bool {
	if r, scripted := s.opts.Replies[stage]; scripted {
		return s.write(c, r)
	}
	return s.write(c, ok)
}

func (s *Raw) session(c net.Conn) {
	if s.opts.NoGreeting {
		s.hang()
		return
	}
	greeting := s.opts.Greeting
	if greeting == "" {
		greeting = "220 raw.smtptest ESMTP"
	}
	if !s.write(c, greeting) || !strings.HasPrefix(greeting, "2") {
		return
	}
	rs := &rawSession{Raw: s, c: c, r: bufio.NewReader(c)}
	for {
		line, err := rs.r.ReadString('\n')
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " ")
		if !rs.command(verb, arg) {
			return
		}
	}
}

// rawSession is one client's connection to a Raw server: the envelope of
// the message under way.
type rawSession struct {
	*Raw
	c    net.Conn
	r    *bufio.Reader
	from string
	to   []string
}

// command answers one command line; false ends the session.
func (rs *rawSession) command(verb, arg string) bool {
	switch strings.ToUpper(verb) {
	case "EHLO", "HELO":
		return rs.helo(arg)
	case "AUTH":
		rs.mu.Lock()
		rs.auths++
		rs.mu.Unlock()
		ok := "235 2.7.0 Authentication successful"
		if rs.opts.AuthEcho {
			ok = authEcho(arg)
		}
		return rs.answer(rs.c, StageAuth, ok)
	case "MAIL":
		rs.from, rs.to = addrArg(arg), nil
		return rs.answer(rs.c, StageMail, "250 2.1.0 Ok")
	case "RCPT":
		rs.to = append(rs.to, addrArg(arg))
		return rs.answer(rs.c, StageRcpt, "250 2.1.5 Ok")
	case "DATA":
		return rs.data()
	case "STARTTLS":
		return rs.startTLS()
	case "RSET", "NOOP":
		return rs.write(rs.c, "250 2.0.0 Ok")
	case "QUIT":
		rs.write(rs.c, "221 2.0.0 Bye")
		return false
	}
	return rs.write(rs.c, fmt.Sprintf("502 5.5.2 %s not implemented", verb))
}

func (rs *rawSession) helo(name string) bool {
	rs.mu.Lock()
	rs.helos = append(rs.helos, name)
	rs.mu.Unlock()
	if rs.opts.RequireFQDN && !qualifiedName(name) {
		return rs.write(rs.c, "504 5.5.2 <"+name+">: Helo command rejected: need fully-qualified hostname")
	}
	caps := []string{"250-raw.smtptest", "250-8BITMIME", "250-AUTH PLAIN LOGIN"}
	if rs.offersStartTLS() {
		caps = append(caps, "250-STARTTLS")
	}
	if rs.opts.Enhanced {
		caps = append(caps, "250-ENHANCEDSTATUSCODES")
	}
	caps = append(caps, "250 PIPELINING")
	return rs.answer(rs.c, StageEHLO, strings.Join(caps, "\r\n"))
}

// offersStartTLS: STARTTLS is configured, not stripped, not done yet.
func (rs *rawSession) offersStartTLS() bool {
	_, done := rs.c.(*tls.Conn)
	return rs.opts.StartTLS != nil && !rs.opts.StripStartTLS && !done
}

// startTLS upgrades the session (RFC 3207): the client then says EHLO
// again over TLS.
func (rs *rawSession) startTLS() bool {
	if !rs.offersStartTLS() {
		return rs.write(rs.c, "502 5.5.1 STARTTLS not offered")
	}
	if !rs.write(rs.c, "220 2.0.0 Ready to start TLS") {
		return false
	}
	tc := tls.Server(rs.c, rs.opts.StartTLS)
	if err := tc.Handshake(); err != nil {
		return false
	}
	rs.c, rs.r = tc, bufio.NewReader(tc)
	return true
}

// data takes a message up to its final dot, keeps it, and does what the
// script says after the dot.
func (rs *rawSession) data() bool {
	if !rs.write(rs.c, "354 End data with <CR><LF>.<CR><LF>") {
		return false
	}
	data, err := readDotted(rs.r)
	if err != nil {
		return false
	}
	msg := Message{From: rs.from, To: rs.to, Data: data}
	if parsed, err := mail.ReadMessage(bytes.NewReader(data)); err == nil {
		msg.Header = parsed.Header
	}
	rs.mu.Lock()
	rs.received = append(rs.received, msg)
	index := len(rs.received) - 1
	if index == 0 {
		close(rs.dot)
	}
	rs.mu.Unlock()
	switch {
	case rs.opts.AfterDot == AfterDotDrop:
		return false
	case rs.opts.AfterDot == AfterDotHang:
		rs.hang()
		return false
	case rs.opts.Flood != nil && rs.opts.Flood.Stage == StageData:
		rs.settle(index, "flood")
		return rs.flood(rs.c)
	}
	answer, scripted := rs.opts.Replies[StageData]
	if !scripted {
		answer = "250 2.0.0 Ok: queued as " + strconv.Itoa(len(data))
	}
	rs.settle(index, answer)
	return rs.write(rs.c, answer)
}

// settle counts received message index as accepted (a 2xx answer) or
// refused (anything else).
func (s *Raw) settle(index int, answer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasPrefix(answer, "2") {
		s.accepted++
	} else {
		s.refused[index] = true
	}
}

// qualifiedName is Postfix's reject_non_fqdn_helo_hostname test: an
// address literal, or a name with a dot that does not end in one.
func qualifiedName(name string) bool {
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		return true
	}
	return strings.Contains(strings.TrimSuffix(name, "."), ".")
}

func addrArg(arg string) string {
	_, a, _ := strings.Cut(arg, ":")
	a, _, _ = strings.Cut(strings.TrimSpace(a), " ")
	return strings.Trim(a, "<>")
}

// readDotted reads message data up to the final dot, undoing dot-stuffing.
func readDotted(r *bufio.Reader) ([]byte, error) {
	var b bytes.Buffer
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if line == ".\r\n" {
			return b.Bytes(), nil
		}
		b.WriteString(strings.TrimPrefix(line, "."))
	}
}
