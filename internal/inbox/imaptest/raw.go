package imaptest

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
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
	// Dates are the messages' INTERNALDATEs (UID i+1 has Dates[i]); a
	// message without one is dated when the server started. UID SEARCH
	// honours SINCE against them.
	Dates []time.Time
	// UIDValidityPerSession gives each session a new UIDVALIDITY (the
	// option's plus the session's number), the UIDs unchanged: a server
	// that says it renumbered the INBOX at every login.
	UIDValidityPerSession bool
	// Hostile, when set, answers as an attacker's server does (Hostile*).
	Hostile Hostile
	// TLS, when set, makes the server offer STARTTLS with this config.
	TLS *tls.Config
}

// Hostile is a way a server attacks the client's memory or time.
type Hostile int

const (
	HostileNone Hostile = iota
	// HostileUIDWrap answers UID SEARCH with the legal UID 4294967295
	// beside 1 and 2 ("* SEARCH 1 2 4294967295").
	HostileUIDWrap
	// HostileEndlessGreeting sends a greeting line that never ends.
	HostileEndlessGreeting
	// HostileEndlessLiteral answers UID FETCH with a literal announced as
	// 4 GiB and sends bytes until the client goes away.
	HostileEndlessLiteral
	// HostileEndlessResponses answers UID FETCH with untagged responses
	// until the client goes away.
	HostileEndlessResponses
	// HostileTrickle sends a greeting one byte every 100 ms, never ending
	// it: under every cap, it holds the client until its deadline.
	HostileTrickle
)

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
	sessions    atomic.Uint32
	started     time.Time
	mu          sync.Mutex
	messages    [][]byte
	dates       []time.Time
	omit        map[int]bool
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
	s := &Raw{opts: opts, ln: ln, quit: make(chan struct{}), stalled: make(chan struct{}), started: time.Now(), omit: map[int]bool{}}
	for _, m := range opts.Messages {
		s.add(m, time.Time{})
	}
	for i, d := range opts.Dates {
		if i < len(s.dates) {
			s.dates[i] = d
		}
	}
	s.wg.Add(1)
	go s.serve()
	tb.Cleanup(s.Close)
	return s
}

// URL is an imap_url logging in as address.
func (s *Raw) URL(address string) string {
	return fmt.Sprintf("imap://%s@%s", address, s.ln.Addr())
}

// Append adds a message dated now as the next UID.
func (s *Raw) Append(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(msg, time.Now())
}

func (s *Raw) add(msg []byte, date time.Time) {
	if date.IsZero() {
		date = s.started
	}
	s.messages = append(s.messages, msg)
	s.dates = append(s.dates, date)
}

// Omit makes UID FETCH leave these UIDs out of its answers (answering OK
// all the same) until Omit is called again.
func (s *Raw) Omit(uids ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.omit = map[int]bool{}
	for _, u := range uids {
		s.omit[u] = true
	}
}

// snapshot is the INBOX as a session sees it now.
func (s *Raw) snapshot() (msgs [][]byte, dates []time.Time, omit map[int]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	omit = make(map[int]bool, len(s.omit))
	for k, v := range s.omit {
		omit[k] = v
	}
	return slices.Clone(s.messages), slices.Clone(s.dates), omit
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

// rawSession is one client's session: the INBOX as it was at login.
type rawSession struct {
	s           *Raw
	w           *bufio.Writer
	uidValidity uint32
	messages    [][]byte
	dates       []time.Time
	omit        map[int]bool
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
	ss := &rawSession{s: s, w: bufio.NewWriter(c), uidValidity: s.opts.UIDValidity}
	if n := s.sessions.Add(1); s.opts.UIDValidityPerSession {
		ss.uidValidity += n
	}
	ss.messages, ss.dates, ss.omit = s.snapshot()
	if s.opts.Hostile == HostileTrickle {
		ss.trickle()
		return
	}
	if s.opts.Hostile == HostileEndlessGreeting {
		ss.w.WriteString("* OK ")
		ss.endless([]byte(strings.Repeat("a", 4096)))
		return
	}
	if !ss.send("* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN%s] imaptest raw ready", ss.startTLSCap()) {
		return
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		tag, cmd, args := splitCommand(strings.TrimRight(line, "\r\n"))
		if cmd == "STARTTLS" && s.opts.TLS != nil {
			if !ss.send("%s OK begin TLS", tag) {
				return
			}
			tc := tls.Server(c, s.opts.TLS)
			r, ss.w = bufio.NewReader(tc), bufio.NewWriter(tc)
			continue
		}
		if !ss.command(tag, cmd, args) {
			return
		}
	}
}

func (ss *rawSession) startTLSCap() string {
	if ss.s.opts.TLS != nil {
		return " STARTTLS"
	}
	return ""
}

func (ss *rawSession) send(format string, args ...any) bool {
	fmt.Fprintf(ss.w, format+"\r\n", args...)
	return ss.w.Flush() == nil
}

// endless writes chunk until the client goes away or the server closes.
func (ss *rawSession) endless(chunk []byte) {
	for {
		select {
		case <-ss.s.quit:
			return
		default:
		}
		if _, err := ss.w.Write(chunk); err != nil || ss.w.Flush() != nil {
			return
		}
	}
}

// trickle sends "a" every 100 ms until the client goes away.
func (ss *rawSession) trickle() {
	ss.w.WriteString("* OK ")
	for {
		select {
		case <-ss.s.quit:
			return
		case <-time.After(100 * time.Millisecond):
		}
		if ss.w.WriteByte('a') != nil || ss.w.Flush() != nil {
			return
		}
	}
}

// command answers one tagged command; false ends the session.
func (ss *rawSession) command(tag, cmd, args string) bool {
	switch cmd {
	case "CAPABILITY":
		return ss.send("* CAPABILITY IMAP4rev1 AUTH=PLAIN") && ss.send("%s OK done", tag)
	case "NOOP":
		return ss.send("%s OK done", tag)
	case "LOGIN":
		if f := strings.Fields(args); len(f) == 2 && unquote(f[1]) == ss.s.opts.Password {
			return ss.send("%s OK [CAPABILITY IMAP4rev1] logged in", tag)
		}
		return ss.send("%s NO [AUTHENTICATIONFAILED] invalid credentials", tag)
	case "SELECT", "EXAMINE":
		return ss.send("* %d EXISTS", len(ss.messages)) && ss.send("* OK [UIDVALIDITY %d] ok", ss.uidValidity) &&
			ss.send("* OK [UIDNEXT %d] ok", len(ss.messages)+1) && ss.send("* FLAGS (\\Seen)") &&
			ss.send("%s OK [READ-ONLY] done", tag)
	case "UID":
		return ss.uid(tag, args)
	case "LOGOUT":
		ss.send("* BYE bye")
		ss.send("%s OK done", tag)
		return false
	}
	return ss.send("%s BAD unknown command", tag)
}

// uid answers UID SEARCH (every UID, or those since a SINCE date) and UID
// FETCH (the whole message as BODY[]<0>, however little was asked for).
func (ss *rawSession) uid(tag, args string) bool {
	sub, rest, _ := strings.Cut(args, " ")
	switch strings.ToUpper(sub) {
	case "SEARCH":
		return ss.search(tag, rest)
	case "FETCH":
		set, items, _ := strings.Cut(rest, " ")
		return ss.fetch(tag, set, items)
	}
	return ss.send("%s BAD unknown UID command", tag)
}

func (ss *rawSession) search(tag, criteria string) bool {
	if ss.s.opts.Hostile == HostileUIDWrap {
		return ss.send("* SEARCH 1 2 4294967295") && ss.send("%s OK done", tag)
	}
	var since time.Time
	f := strings.Fields(strings.ToUpper(criteria))
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "SINCE" {
			since, _ = time.Parse("2-Jan-2006", strings.Trim(f[i+1], `"`))
		}
	}
	var b strings.Builder
	b.WriteString("* SEARCH")
	for i := range ss.messages {
		// SINCE compares dates, not times (RFC 9051 §6.4.4); the server's
		// time zone is UTC.
		if d := ss.dates[i].UTC(); since.IsZero() || !time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC).Before(since) {
			fmt.Fprintf(&b, " %d", i+1)
		}
	}
	return ss.send("%s", b.String()) && ss.send("%s OK done", tag)
}

// fetch sends the messages of set whole (or only their INTERNALDATE when
// no body is asked for); the first FETCH of the server's life stalls half
// way through its first message for FetchStall.
func (ss *rawSession) fetch(tag, set, items string) bool {
	s := ss.s
	switch s.opts.Hostile {
	case HostileEndlessLiteral:
		ss.w.WriteString("* 1 FETCH (UID 1 BODY[]<0> {4294967295}\r\n")
		ss.endless([]byte(strings.Repeat("x", 4096)))
		return false
	case HostileEndlessResponses:
		ss.endless([]byte(strings.Repeat("* 1 FETCH (FLAGS ())\r\n", 200)))
		return false
	}
	first := s.fetches.Add(1) == 1
	body := strings.Contains(strings.ToUpper(items), "BODY")
	for i, uid := range uidsIn(set, len(ss.messages)) {
		if ss.omit[uid] {
			continue
		}
		date := ss.dates[uid-1].UTC().Format("02-Jan-2006 15:04:05 -0700")
		if !body {
			if !ss.send(`* %d FETCH (UID %d INTERNALDATE "%s")`, uid, uid, date) {
				return false
			}
			continue
		}
		msg := ss.messages[uid-1]
		fmt.Fprintf(ss.w, "* %d FETCH (UID %d INTERNALDATE \"%s\" BODY[]<0> {%d}\r\n", uid, uid, date, len(msg))
		if first && i == 0 && s.opts.FetchStall > 0 {
			half := len(msg) / 2
			if !ss.stall(msg[:half]) {
				return false
			}
			msg = msg[half:]
		}
		ss.w.Write(msg)
		if !ss.send(")") {
			return false
		}
	}
	return ss.send("%s OK done", tag)
}

// stall sends part and then nothing for FetchStall; false when the
// client went away or the server closed.
func (ss *rawSession) stall(part []byte) bool {
	s := ss.s
	ss.w.Write(part)
	if ss.w.Flush() != nil {
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
