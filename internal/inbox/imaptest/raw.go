package imaptest

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// RawOptions scripts a Raw server.
type RawOptions struct {
	// Password is what LOGIN must give (any user name is accepted).
	Password string
	// UIDValidity of the INBOX; 0 means 1.
	UIDValidity uint32
	// Messages are the INBOX, UIDs 1, 2, ... in order, served byte for byte
	// (8-bit bytes and NULs included, as a careless or hostile server does).
	Messages [][]byte
	// FetchStall, when positive, makes the first UID FETCH stop in the
	// middle of its first message's literal for that long (or until Close),
	// then go on: a server that stalls mid-FETCH once.
	FetchStall time.Duration
}

// Raw is a scripted IMAP4rev1 server on 127.0.0.1, written by hand so a
// test controls every byte and every pause; it speaks just what the inbox
// tick uses (LOGIN, EXAMINE, UID SEARCH, UID FETCH, LOGOUT).
type Raw struct {
	opts    RawOptions
	ln      net.Listener
	quit    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	fetches atomic.Int32
	// stalled is closed when a FETCH starts its stall.
	stalled     chan struct{}
	stalledOnce sync.Once
}

// NewRaw starts a Raw server closed when tb ends.
func NewRaw(tb testing.TB, opts RawOptions) *Raw {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	if opts.UIDValidity == 0 {
		opts.UIDValidity = 1
	}
	s := &Raw{opts: opts, ln: ln, quit: make(chan struct{}), stalled: make(chan struct{})}
	s.wg.Add(1)
	go s.serve()
	tb.Cleanup(s.Close)
	return s
}

// URL is an imap_url logging in as address.
func (s *Raw) URL(address string) string {
	return fmt.Sprintf("imap://%s@%s", address, s.ln.Addr())
}

// Fetches counts the UID FETCH commands received.
func (s *Raw) Fetches() int { return int(s.fetches.Load()) }

// Stalled is closed once a FETCH has begun to stall.
func (s *Raw) Stalled() <-chan struct{} { return s.stalled }

// Close stops the server and ends every session, stalled or not.
func (s *Raw) Close() {
	s.once.Do(func() {
		close(s.quit)
		_ = s.ln.Close()
	})
	s.wg.Wait()
}

func (s *Raw) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.session(c)
		}()
	}
}

func (s *Raw) session(c net.Conn) {
	defer c.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-s.quit:
			_ = c.Close()
		case <-stop:
		}
	}()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	send := func(format string, args ...any) bool {
		fmt.Fprintf(w, format+"\r\n", args...)
		return w.Flush() == nil
	}
	if !send("* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] imaptest raw ready") {
		return
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		tag, cmd, args := splitCommand(strings.TrimRight(line, "\r\n"))
		if !s.command(tag, cmd, args, w, send) {
			return
		}
	}
}

// command answers one tagged command; false ends the session.
func (s *Raw) command(tag, cmd, args string, w *bufio.Writer, send func(string, ...any) bool) bool {
	switch cmd {
	case "CAPABILITY":
		return send("* CAPABILITY IMAP4rev1 AUTH=PLAIN") && send("%s OK done", tag)
	case "NOOP":
		return send("%s OK done", tag)
	case "LOGIN":
		if f := strings.Fields(args); len(f) == 2 && unquote(f[1]) == s.opts.Password {
			return send("%s OK [CAPABILITY IMAP4rev1] logged in", tag)
		}
		return send("%s NO [AUTHENTICATIONFAILED] invalid credentials", tag)
	case "SELECT", "EXAMINE":
		return send("* %d EXISTS", len(s.opts.Messages)) && send("* OK [UIDVALIDITY %d] ok", s.opts.UIDValidity) &&
			send("* OK [UIDNEXT %d] ok", len(s.opts.Messages)+1) && send("* FLAGS (\\Seen)") &&
			send("%s OK [READ-ONLY] done", tag)
	case "UID":
		return s.uid(tag, args, w, send)
	case "LOGOUT":
		send("* BYE bye")
		send("%s OK done", tag)
		return false
	}
	return send("%s BAD unknown command", tag)
}

// uid answers UID SEARCH (every UID) and UID FETCH (the whole message as
// BODY[]<0>, however little was asked for).
func (s *Raw) uid(tag, args string, w *bufio.Writer, send func(string, ...any) bool) bool {
	sub, rest, _ := strings.Cut(args, " ")
	switch strings.ToUpper(sub) {
	case "SEARCH":
		var b strings.Builder
		b.WriteString("* SEARCH")
		for i := range s.opts.Messages {
			fmt.Fprintf(&b, " %d", i+1)
		}
		return send("%s", b.String()) && send("%s OK done", tag)
	case "FETCH":
		set, _, _ := strings.Cut(rest, " ")
		return s.fetch(tag, set, w, send)
	}
	return send("%s BAD unknown UID command", tag)
}

// fetch sends the messages of set whole; the first FETCH of the server's
// life stalls half way through its first message for FetchStall.
func (s *Raw) fetch(tag, set string, w *bufio.Writer, send func(string, ...any) bool) bool {
	first := s.fetches.Add(1) == 1
	for i, uid := range uidsIn(set, len(s.opts.Messages)) {
		msg := s.opts.Messages[uid-1]
		fmt.Fprintf(w, "* %d FETCH (UID %d BODY[]<0> {%d}\r\n", uid, uid, len(msg))
		if first && i == 0 && s.opts.FetchStall > 0 {
			half := len(msg) / 2
			if !s.stall(w, msg[:half]) {
				return false
			}
			msg = msg[half:]
		}
		w.Write(msg)
		if !send(")") {
			return false
		}
	}
	return send("%s OK done", tag)
}

// stall sends part and then nothing for FetchStall; false when the
// client went away or the server closed.
func (s *Raw) stall(w *bufio.Writer, part []byte) bool {
	w.Write(part)
	if w.Flush() != nil {
		return false
	}
	s.stalledOnce.Do(func() { close(s.stalled) })
	select {
	case <-time.After(s.opts.FetchStall):
		return true
	case <-s.quit:
		return false
	}
}

func splitCommand(line string) (tag, cmd, args string) {
	tag, rest, _ := strings.Cut(line, " ")
	cmd, args, _ = strings.Cut(rest, " ")
	return tag, strings.ToUpper(cmd), args
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// uidsIn lists the UIDs of a sequence set ("1:3,5", "4:*") up to n.
func uidsIn(set string, n int) []int {
	var out []int
	for _, part := range strings.Split(set, ",") {
		lo, hi, isRange := strings.Cut(part, ":")
		a := atoiOr(lo, n)
		b := a
		if isRange {
			b = atoiOr(hi, n)
		}
		if a > b {
			a, b = b, a
		}
		for u := max(a, 1); u <= min(b, n); u++ {
			out = append(out, u)
		}
	}
	return out
}

func atoiOr(s string, star int) int {
	if s == "*" {
		return star
	}
	n, _ := strconv.Atoi(s)
	return n
}
