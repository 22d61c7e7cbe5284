// Package smtptest runs an in-process SMTP server (emersion/go-smtp) that
// records every message it accepts and answers scripted errors per sender or
// recipient, drops the connection or stays silent. Tests use it as the real
// far end of the Mailer; the demo uses it as a local mail sink. Raw is a
// hand-written server for what go-smtp will not do (no greeting, a 421
// greeting, replies one byte at a time, no ENHANCEDSTATUSCODES).
package smtptest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Stage is the SMTP command a Rule answers.
type Stage string

const (
	StageEHLO Stage = "ehlo" // Raw only
	StageAuth Stage = "auth"
	StageMail Stage = "mail"
	StageRcpt Stage = "rcpt"
	StageData Stage = "data"
)

// Rule scripts a reply. The first matching rule wins.
type Rule struct {
	Stage Stage
	// From matches the envelope sender (the username for StageAuth); empty
	// matches any.
	From string
	// To matches a recipient (StageRcpt, StageData); empty matches any.
	To string
	// Code, Enhanced ("5.4.5", may be empty) and Message form the reply.
	Code     int
	Enhanced string
	Message  string
	// Times is how often the rule fires before it is spent; 0 = always.
	Times int
	// Close drops the connection instead of replying; at StageData it does
	// so halfway through the message, or after its final dot with AfterDot.
	Close bool
	// AfterDot (StageData) reads the whole message, final dot included,
	// before Close or Hang: the server has the message, the client gets no
	// answer. The message is counted in Received.
	AfterDot bool
	// Hang never replies (until the server closes).
	Hang bool
}

// Message is one accepted message.
type Message struct {
	From     string
	To       []string
	Username string
	Data     []byte
	// Header is the parsed header; nil when the data was not a valid message.
	Header mail.Header
	// Unanswered: the final dot arrived but the server dropped the
	// connection or never replied (Rule.AfterDot). The server has the
	// message; the client cannot know it.
	Unanswered bool
}

// Options configures a Server.
type Options struct {
	// Users, when not empty, are the only credentials AUTH PLAIN accepts
	// and AUTH becomes mandatory; when empty, any credentials pass. AUTH is
	// offered without TLS: the server only listens on loopback.
	Users map[string]string
	// CountOnly keeps counters but not message data, for large runs.
	CountOnly bool
	// AcceptDelay is how long the server takes to accept each message after
	// its data arrives, as a real provider's queue does (tens of ms);
	// 0 answers at once.
	AcceptDelay time.Duration
	// OnAccept, when set, runs after the n-th message is accepted and
	// before the client gets its answer (tests cut a dependency there).
	OnAccept func(n int)
	// SMTPUTF8 offers SMTPUTF8 (RFC 6531): addresses with UTF-8 local parts.
	SMTPUTF8 bool
	// Bearer, when set, offers AUTH XOAUTH2 and accepts a login only when
	// Bearer(user, token) says the access token is the user's (tests ask
	// the OAuth stand-in); AUTH becomes mandatory and PLAIN is refused.
	Bearer func(user, token string) bool
	// BearerMechanisms is what a Bearer server offers: XOAUTH2 (the
	// default), OAUTHBEARER, or both.
	BearerMechanisms []string
	// TLS, when set, speaks TLS from the first byte (smtps://), as a
	// provider's submission port 465 does.
	TLS *tls.Config
}

// Server is a running SMTP server on 127.0.0.1.
type Server struct {
	opts     Options
	srv      *smtp.Server
	listener net.Listener

	quit chan struct{}

	tally
	rules    []*Rule
	messages []Message
	received int
	attempts map[string]int
}

// Start listens on 127.0.0.1 on a free port and serves until Close.
func Start(opts Options) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("smtptest: listen: %w", err)
	}
	if opts.TLS != nil {
		l = tls.NewListener(l, opts.TLS)
	}
	s := &Server{opts: opts, listener: l, attempts: make(map[string]int), quit: make(chan struct{})}
	s.srv = smtp.NewServer(smtp.BackendFunc(s.newSession))
	s.srv.Domain = "smtptest.local"
	s.srv.AllowInsecureAuth = true
	s.srv.EnableSMTPUTF8 = opts.SMTPUTF8
	s.srv.ErrorLog = discardLogger{}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// New starts a server for a test and closes it when the test ends.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := Start(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// Close stops the server and drops open connections.
func (s *Server) Close() error {
	s.mu.Lock()
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	s.mu.Unlock()
	return s.srv.Close()
}

// Host is the listening IP.
func (s *Server) Host() string { return s.listener.Addr().(*net.TCPAddr).IP.String() }

// Port is the listening port.
func (s *Server) Port() int { return s.listener.Addr().(*net.TCPAddr).Port }

// URL is an smtp:// URL for this server (smtps:// with TLS), with user
// when not empty.
func (s *Server) URL(user string) string {
	scheme := "smtp://"
	if s.opts.TLS != nil {
		scheme = "smtps://"
	}
	host := net.JoinHostPort(s.Host(), strconv.Itoa(s.Port()))
	if user != "" {
		return scheme + user + "@" + host
	}
	return scheme + host
}

// Script adds a rule.
func (s *Server) Script(r Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, &r)
}

// Messages returns the messages the server has, in order of arrival:
// accepted ones, and Unanswered ones (see Rule.AfterDot).
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Received counts messages whose final dot arrived, answered or not: the
// server has each of them.
func (s *Server) Received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// Attempts counts MAIL FROM commands per envelope sender, accepted or not.
func (s *Server) Attempts(from string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts[strings.ToLower(from)]
}

// match returns the reply of the first live rule for the stage, consuming
// one use of it.
func (s *Server) match(stage Stage, from, to string) *Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if r.Stage != stage || r.Times < 0 ||
			r.From != "" && !strings.EqualFold(r.From, from) ||
			r.To != "" && !strings.EqualFold(r.To, to) {
			continue
		}
		if r.Times > 0 {
			r.Times--
			if r.Times == 0 {
				r.Times = -1 // spent
			}
		}
		return r
	}
	return nil
}

func (r *Rule) smtpError() *smtp.SMTPError {
	code := smtp.NoEnhancedCode
	if parts := strings.Split(r.Enhanced, "."); len(parts) == 3 {
		for i, p := range parts {
			code[i], _ = strconv.Atoi(p)
		}
	}
	msg := r.Message
	if msg == "" {
		msg = "scripted reply"
	}
	return &smtp.SMTPError{Code: r.Code, EnhancedCode: code, Message: msg}
}

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	s.mu.Lock()
	s.connections++
	s.mu.Unlock()
	return &session{server: s, conn: c}, nil
}

type session struct {
	server   *Server
	conn     *smtp.Conn
	username string
	from     string
	to       []string
}

var errClosed = errors.New("smtptest: connection closed by script")

func (ss *session) reply(stage Stage, from, to string) error {
	r := ss.server.match(stage, from, to)
	switch {
	case r == nil:
		return nil
	case r.Hang:
		<-ss.server.quit
		return errClosed
	case r.Close:
		_ = ss.conn.Close()
		return errClosed
	}
	return r.smtpError()
}

func (ss *session) AuthMechanisms() []string {
	switch {
	case ss.server.opts.Bearer != nil && len(ss.server.opts.BearerMechanisms) > 0:
		return ss.server.opts.BearerMechanisms
	case ss.server.opts.Bearer != nil:
		return []string{xoauth2}
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	if ss.server.opts.Bearer != nil {
		switch {
		case !slices.Contains(ss.AuthMechanisms(), mech):
			return nil, smtp.ErrAuthUnknownMechanism
		case mech == sasl.OAuthBearer:
			return newOAuthBearerServer(ss), nil
		}
		return &xoauth2Server{session: ss}, nil
	}
	return sasl.NewPlainServer(func(_, username, password string) error {
		if err := ss.reply(StageAuth, username, ""); err != nil {
			return err
		}
		users := ss.server.opts.Users
		if want, ok := users[username]; len(users) > 0 && (!ok || want != password) {
			return smtp.ErrAuthFailed
		}
		ss.username = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	ss.server.mu.Lock()
	ss.server.attempts[strings.ToLower(from)]++
	ss.server.mu.Unlock()
	if (len(ss.server.opts.Users) > 0 || ss.server.opts.Bearer != nil) && ss.username == "" {
		return smtp.ErrAuthRequired
	}
	if err := ss.reply(StageMail, from, ""); err != nil {
		return err
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := ss.reply(StageRcpt, ss.from, to); err != nil {
		return err
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	for _, to := range ss.to {
		rule := ss.server.match(StageData, ss.from, to)
		switch {
		case rule == nil:
			continue
		case rule.AfterDot:
			data, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			ss.server.keep(Message{From: ss.from, To: append([]string(nil), ss.to...), Username: ss.username, Unanswered: true}, data)
			if rule.Hang {
				<-ss.server.quit
			}
			_ = ss.conn.Close()
			return errClosed
		case rule.Hang:
			<-ss.server.quit
			return errClosed
		case rule.Close:
			// Read part of the message so the client is mid-DATA.
			_, _ = io.CopyN(io.Discard, r, 64)
			_ = ss.conn.Close()
			return errClosed
		default:
			return rule.smtpError()
		}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if d := ss.server.opts.AcceptDelay; d > 0 {
		time.Sleep(d)
	}
	ss.server.keep(Message{From: ss.from, To: append([]string(nil), ss.to...), Username: ss.username}, data)
	return nil
}

// keep records a message whose final dot arrived.
func (s *Server) keep(msg Message, data []byte) {
	if !s.opts.CountOnly {
		msg.Data = data
		if parsed, err := mail.ReadMessage(bytes.NewReader(data)); err == nil {
			msg.Header = parsed.Header
		}
	}
	s.mu.Lock()
	s.received++
	if !msg.Unanswered {
		s.accepted++
	}
	if !s.opts.CountOnly {
		s.messages = append(s.messages, msg)
	}
	n := s.accepted
	s.mu.Unlock()
	if s.opts.OnAccept != nil && !msg.Unanswered {
		s.opts.OnAccept(n)
	}
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

type discardLogger struct{}

func (discardLogger) Printf(string, ...interface{}) {}
func (discardLogger) Println(...interface{})        {}
