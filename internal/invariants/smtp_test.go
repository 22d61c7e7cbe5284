package invariants

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// smtpMode is how the fake SMTP server answers, switched during a run.
type smtpMode string

const (
	smtpOK        smtpMode = "ok"
	smtpSlow      smtpMode = "slow"       // takes smtpSlowDelay to accept each message
	smtpDropAfter smtpMode = "drop_after" // has the message, hangs up without an answer
	smtp421       smtpMode = "421"        // 421 4.7.0 to MAIL: throttled, closing
	smtpQuota     smtpMode = "5.4.5"      // 550 5.4.5 to MAIL: daily quota
	smtpGreylist  smtpMode = "451"        // 451 4.7.1 to RCPT: try again later
)

var smtpModes = []smtpMode{smtpOK, smtpOK, smtpSlow, smtpDropAfter, smtp421, smtpQuota, smtpGreylist}

const smtpSlowDelay = 150 * time.Millisecond

// delivery is one message whose final dot reached the server: the server
// has it, answered or not.
type delivery struct {
	// Started is when its MAIL FROM arrived, At when its final dot did, in
	// harness time (the database's frame: the wall clock plus every time
	// shift so far), which the claim's caps and the stops are kept in.
	Started, At time.Time
	// StartedWall is Started by the wall clock, which a tick reads (its
	// clock cannot be moved from outside), so its send-time window check
	// and the lead's day are in this frame.
	StartedWall time.Time
	From, To    string
	MessageID   string
	// Step is 1 plus the number of Message-IDs in References.
	Step     int
	Subject  string
	Answered bool
}

// fakeSMTP is an SMTP server on 127.0.0.1 whose mode the schedule switches
// and which logs every message it has.
type fakeSMTP struct {
	clock    *clock
	srv      *smtp.Server
	listener net.Listener

	mu   sync.Mutex
	mode smtpMode
	log  []delivery
	quit chan struct{}
}

func startSMTP(c *clock) (*fakeSMTP, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &fakeSMTP{clock: c, listener: l, mode: smtpOK, quit: make(chan struct{})}
	f.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{f: f, conn: c}, nil
	}))
	f.srv.Domain = "invariants.local"
	f.srv.AllowInsecureAuth = true
	f.srv.ErrorLog = discard{}
	go func() { _ = f.srv.Serve(l) }()
	return f, nil
}

func (f *fakeSMTP) URL() string {
	a := f.listener.Addr().(*net.TCPAddr)
	return "smtp://" + net.JoinHostPort(a.IP.String(), strconv.Itoa(a.Port))
}

func (f *fakeSMTP) setMode(m smtpMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mode = m
}

func (f *fakeSMTP) currentMode() smtpMode {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mode
}

func (f *fakeSMTP) deliveries() []delivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]delivery(nil), f.log...)
}

func (f *fakeSMTP) close() {
	close(f.quit)
	_ = f.srv.Close()
}

type smtpSession struct {
	f       *fakeSMTP
	conn    *smtp.Conn
	from    string
	to      []string
	started time.Time
	// startedWall is started by the wall clock.
	startedWall time.Time
}

var errHungUp = errors.New("invariants: hung up after the final dot")

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(string, string, string) error { return nil }), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	switch s.f.currentMode() {
	case smtp421:
		return &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 7, 0}, Message: "Try again later, closing connection"}
	case smtpQuota:
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 4, 5}, Message: "Daily user sending quota exceeded"}
	}
	s.from, s.started, s.startedWall = from, s.f.clock.now(), time.Now()
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.f.currentMode() == smtpGreylist {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 1}, Message: "Greylisted, try again later"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	mode := s.f.currentMode()
	if mode == smtpSlow {
		select {
		case <-time.After(smtpSlowDelay):
		case <-s.f.quit:
		}
	}
	d := delivery{Started: s.started, StartedWall: s.startedWall, At: s.f.clock.now(), From: strings.ToLower(s.from), Step: 1, Answered: mode != smtpDropAfter}
	if len(s.to) > 0 {
		d.To = strings.ToLower(s.to[0])
	}
	if msg, err := mail.ReadMessage(bytes.NewReader(data)); err == nil {
		d.MessageID = strings.Trim(msg.Header.Get("Message-Id"), "<> ")
		d.Subject = msg.Header.Get("Subject")
		d.Step += len(strings.Fields(msg.Header.Get("References")))
	}
	s.f.mu.Lock()
	s.f.log = append(s.f.log, d)
	s.f.mu.Unlock()
	if mode == smtpDropAfter {
		_ = s.conn.Close() // no answer to the final dot
		return errHungUp
	}
	return nil
}

func (s *smtpSession) Reset() { s.from, s.to = "", nil }

func (s *smtpSession) Logout() error { return nil }

type discard struct{}

func (discard) Printf(string, ...interface{}) {}
func (discard) Println(...interface{})        {}
