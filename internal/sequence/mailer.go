package sequence

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"
)

// MailerTimeoutDefault bounds each SMTP dial and command.
const MailerTimeoutDefault = 30 * time.Second

// MailerOptions configures a Mailer.
type MailerOptions struct {
	// Timeout bounds dials and commands; 0 means MailerTimeoutDefault.
	Timeout time.Duration
	// HELO is the name announced in EHLO; empty means the host name.
	HELO string
	// TLSConfig overrides the TLS settings (tests trust their own CA);
	// its ServerName is set per mailbox.
	TLSConfig *tls.Config
	// LookupEnv reads password_env variables; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Now stamps the Date header; nil means time.Now.
	Now func() time.Time
}

// Mailer sends messages over one SMTP connection per mailbox, reused for
// every message that mailbox sends until Close. Sends through the same
// mailbox are serialized; different mailboxes send in parallel.
type Mailer struct {
	opts MailerOptions

	mu    sync.Mutex
	conns map[string]*mailboxConn
}

type mailboxConn struct {
	mu     sync.Mutex
	client *mail.Client
	smtp   *smtp.Client
}

// NewMailer returns a Mailer with no open connections.
func NewMailer(opts MailerOptions) *Mailer {
	if opts.Timeout == 0 {
		opts.Timeout = MailerTimeoutDefault
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Mailer{opts: opts, conns: make(map[string]*mailboxConn)}
}

// Send delivers msg through mb. Every failure is a *DeliveryError.
func (m *Mailer) Send(ctx context.Context, mb Mailbox, msg *Message) error {
	gm, err := buildMsg(msg, m.opts.Now())
	if err != nil {
		return &DeliveryError{Kind: DeliveryRejected, Err: err}
	}
	conn := m.conn(mb.Address)
	conn.mu.Lock()
	defer conn.mu.Unlock()

	// A reused connection may have been dropped by the server while idle:
	// a failure before MAIL FROM was accepted sent nothing, so redial once.
	for attempt := 0; ; attempt++ {
		reused := conn.smtp != nil
		if !reused {
			if err := m.dial(ctx, mb, conn); err != nil {
				return ClassifyDelivery(err)
			}
		}
		err := conn.client.SendWithSMTPClient(conn.smtp, gm)
		if err == nil {
			return nil
		}
		de := ClassifyDelivery(err)
		if de.Code == 0 {
			// No SMTP reply: the connection is unusable.
			conn.drop()
			if reused && attempt == 0 && beforeMailFrom(err) {
				continue
			}
		}
		return de
	}
}

func beforeMailFrom(err error) bool {
	var se *mail.SendError
	return errors.As(err, &se) && (se.Reason == mail.ErrSMTPMailFrom || se.Reason == mail.ErrConnCheck)
}

func (m *Mailer) conn(address string) *mailboxConn {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := strings.ToLower(address)
	c := m.conns[key]
	if c == nil {
		c = &mailboxConn{}
		m.conns[key] = c
	}
	return c
}

func (m *Mailer) dial(ctx context.Context, mb Mailbox, conn *mailboxConn) error {
	opts, err := m.clientOptions(mb)
	if err != nil {
		return err
	}
	client, err := mail.NewClient(mb.SMTP.Host, opts...)
	if err != nil {
		return fmt.Errorf("mailbox %s: %w", mb.Address, err)
	}
	sc, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return fmt.Errorf("mailbox %s: connect %s: %w", mb.Address, mb.SMTP.Addr(), err)
	}
	conn.client, conn.smtp = client, sc
	return nil
}

func (m *Mailer) clientOptions(mb Mailbox) ([]mail.Option, error) {
	ep := mb.SMTP
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if m.opts.TLSConfig != nil {
		tlsConfig = m.opts.TLSConfig.Clone()
	}
	tlsConfig.ServerName = ep.Host
	opts := []mail.Option{
		mail.WithPort(ep.Port),
		mail.WithTimeout(m.opts.Timeout),
		mail.WithTLSConfig(tlsConfig),
		// One NOOP and one RSET per message would double the round trips;
		// Send redials instead when a reused connection turns out dead.
		mail.WithoutNoop(),
		mail.WithoutRset(),
	}
	if m.opts.HELO != "" {
		opts = append(opts, mail.WithHELO(m.opts.HELO))
	}
	switch ep.TLS {
	case TLSImplicit:
		opts = append(opts, mail.WithSSL())
	case TLSRequired:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	}
	if ep.Username == "" {
		return opts, nil
	}
	password, ok := m.opts.LookupEnv(mb.PasswordEnv)
	if !ok {
		return nil, &DeliveryError{Kind: DeliveryMailboxDisabled,
			Err: fmt.Errorf("mailbox %s: environment variable %s is not set; export the SMTP password there", mb.Address, mb.PasswordEnv)}
	}
	// Without TLS only loopback gets here (ParseSMTPURL upgrades the
	// rest to TLSRequired); PLAIN is what local test servers speak.
	auth := mail.SMTPAuthAutoDiscover
	if ep.TLS == TLSOpportunistic {
		auth = mail.SMTPAuthPlain
	}
	return append(opts, mail.WithSMTPAuth(auth), mail.WithUsername(ep.Username), mail.WithPassword(password)), nil
}

func (c *mailboxConn) drop() {
	if c.smtp != nil {
		_ = c.smtp.Close()
	}
	c.client, c.smtp = nil, nil
}

// Close quits every open connection.
func (m *Mailer) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for addr, c := range m.conns {
		c.mu.Lock()
		if c.smtp != nil {
			if err := c.client.CloseWithSMTPClient(c.smtp); err != nil {
				errs = append(errs, fmt.Errorf("mailbox %s: %w", addr, err))
			}
		}
		c.client, c.smtp = nil, nil
		c.mu.Unlock()
	}
	return errors.Join(errs...)
}

func buildMsg(msg *Message, now time.Time) (*mail.Msg, error) {
	gm := mail.NewMsg()
	var err error
	if msg.FromName != "" {
		err = gm.FromFormat(msg.FromName, msg.From)
	} else {
		err = gm.From(msg.From)
	}
	if err != nil {
		return nil, fmt.Errorf("from %q: %w", msg.From, err)
	}
	if strings.ContainsAny(msg.To, "\r\n,;<>") {
		return nil, fmt.Errorf("recipient %q is not a single address", msg.To)
	}
	if err := gm.To(msg.To); err != nil {
		return nil, fmt.Errorf("recipient %q: %w", msg.To, err)
	}
	gm.Subject(singleLine(msg.Subject))
	gm.SetMessageIDWithValue(singleLine(msg.MessageID))
	gm.SetDateWithValue(now)
	if n := len(msg.References); n > 0 {
		refs := make([]string, n)
		for i, id := range msg.References {
			refs[i] = "<" + singleLine(id) + ">"
		}
		gm.SetGenHeader(mail.HeaderInReplyTo, refs[n-1])
		gm.SetGenHeader(mail.HeaderReferences, strings.Join(refs, " "))
	}
	if msg.UnsubscribeURL != "" {
		gm.SetGenHeader(mail.HeaderListUnsubscribe, "<"+singleLine(msg.UnsubscribeURL)+">")
		gm.SetGenHeader(mail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
	}
	gm.SetBodyString(mail.TypeTextPlain, msg.Body)
	return gm, nil
}
