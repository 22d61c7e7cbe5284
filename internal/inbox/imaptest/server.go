// Package imaptest runs go-imap's in-memory IMAP server on loopback, for
// tests and the demo: production reads the configured server.
package imaptest

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// Server is an IMAP server on 127.0.0.1 with one account per mailbox
// address, each with an INBOX.
type Server struct {
	srv  *imapserver.Server
	mem  *imapmemserver.Server
	ln   net.Listener
	tls  bool
	mu   sync.Mutex
	user map[string]*imapmemserver.User
	// password and bearer serve XOAUTH2 (SetBearer).
	password map[string]string
	bearer   func(user, token string) bool
	// bearerMechs is what a bearer server offers; empty: XOAUTH2.
	bearerMechs []string
}

// Start listens on a free loopback port, speaking TLS from the first byte
// (imaps://) when cfg is not nil. Logins in clear are allowed: the server is
// on loopback, where rindactl allows them too.
func Start(cfg *tls.Config) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	s := &Server{mem: imapmemserver.New(), ln: ln, tls: cfg != nil, user: map[string]*imapmemserver.User{}, password: map[string]string{}}
	s.srv = imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			if s.bearerFunc() != nil {
				return &xoauth2Session{Session: s.mem.NewSession(), server: s}, nil, nil
			}
			return s.mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}},
		InsecureAuth: true,
		Logger:       log.New(io.Discard, "", 0),
	})
	go s.srv.Serve(ln)
	return s, nil
}

// New starts a server closed when t ends; see Start.
func New(t testing.TB, cfg *tls.Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// AddAccount creates the mailbox address's account with an empty INBOX.
func (s *Server) AddAccount(address, password string) error {
	u := imapmemserver.NewUser(address, password)
	if err := u.Create("INBOX", nil); err != nil {
		return err
	}
	s.mem.AddUser(u)
	s.mu.Lock()
	s.user[address] = u
	s.password[address] = password
	s.mu.Unlock()
	return nil
}

// URL is the imap_url of the account.
func (s *Server) URL(address string) string {
	scheme := "imap"
	if s.tls {
		scheme = "imaps"
	}
	return fmt.Sprintf("%s://%s@%s", scheme, address, s.ln.Addr())
}

// Deliver appends a raw message to the account's INBOX.
func (s *Server) Deliver(address string, raw []byte) error {
	u, err := s.account(address)
	if err != nil {
		return err
	}
	_, err = u.Append("INBOX", bytes.NewReader(raw), &imap.AppendOptions{})
	return err
}

// RenewUIDValidity recreates the INBOX with the same messages under a new
// UIDVALIDITY, as a server does after rebuilding its index.
func (s *Server) RenewUIDValidity(address string, messages [][]byte) error {
	u, err := s.account(address)
	if err != nil {
		return err
	}
	if err := u.Delete("INBOX"); err != nil {
		return err
	}
	if err := u.Create("INBOX", nil); err != nil {
		return err
	}
	for _, m := range messages {
		if err := s.Deliver(address, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) account(address string) (*imapmemserver.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.user[address]
	if u == nil {
		return nil, fmt.Errorf("imaptest: no account %s", address)
	}
	return u, nil
}

// Unseen counts the account's INBOX messages without the \Seen flag.
func (s *Server) Unseen(address string) (int, error) {
	u, err := s.account(address)
	if err != nil {
		return 0, err
	}
	st, err := u.Status("INBOX", &imap.StatusOptions{NumUnseen: true})
	if err != nil {
		return 0, err
	}
	return int(*st.NumUnseen), nil
}
