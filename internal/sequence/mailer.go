package sequence

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/redact"
)

// Per-phase SMTP deadlines. Each phase gets its own clock, so a server
// that trickles a reply one byte at a time cannot stretch a phase, and no
// phase outlives the deadline of the context Send is given.
const (
	// MailerDialTimeoutDefault bounds the TCP (and implicit TLS) connect.
	MailerDialTimeoutDefault = 10 * time.Second
	// MailerGreetingTimeoutDefault bounds the wait for the 220 greeting.
	MailerGreetingTimeoutDefault = 15 * time.Second
	// MailerTimeoutDefault bounds each command and its reply (EHLO,
	// STARTTLS, AUTH, MAIL, RCPT, DATA, RSET, QUIT).
	MailerTimeoutDefault = 15 * time.Second
	// MailerDataTimeoutDefault bounds the reply to the final dot: servers
	// scan the message before they answer.
	MailerDataTimeoutDefault = 60 * time.Second
	// mailerCloseTimeout bounds QUIT when the Mailer closes.
	mailerCloseTimeout = time.Second
)

// MailerOptions configures a Mailer.
type MailerOptions struct {
	// Timeout bounds each command and its reply; 0 means MailerTimeoutDefault.
	Timeout time.Duration
	// DialTimeout, GreetingTimeout and DataTimeout bound the connect, the
	// greeting and the reply to the final dot; 0 means their defaults.
	DialTimeout     time.Duration
	GreetingTimeout time.Duration
	DataTimeout     time.Duration
	// HELO is the name announced in EHLO/HELO by mailboxes without their
	// own (RINDA_SMTP_HELO); empty: the host's FQDN, else an address
	// literal of the connection (greeting.go).
	HELO string
	// FQDN returns the host's fully qualified name or ""; nil means
	// HostFQDN. Called once per Mailer.
	FQDN func() string
	// TLSConfig overrides the TLS settings (tests trust their own CA);
	// its ServerName is set per mailbox.
	TLSConfig *tls.Config
	// LookupEnv reads password_env variables; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Tokens hands out oauth2 mailboxes' access tokens; nil: only
	// password mailboxes can sign in.
	Tokens OAuthTokens
	// Now stamps the Date header; nil means time.Now.
	Now func() time.Time
}

// Mailer sends messages over one SMTP connection per mailbox, reused for
// every message that mailbox sends until Close. Sends through the same
// mailbox are serialized; different mailboxes send in parallel.
type Mailer struct {
	opts MailerOptions
	fqdn func() string

	mu    sync.Mutex
	conns map[string]*mailboxConn
}

type mailboxConn struct {
	mu     sync.Mutex
	client *mail.Client
	smtp   *smtp.Client
	// wire is the TCP connection under smtp (and under TLS): it holds the
	// phase deadlines.
	wire *phasedConn
	// token is the OAuth2 access token the last dial logged in with.
	token string
}

// NewMailer returns a Mailer with no open connections.
func NewMailer(opts MailerOptions) *Mailer {
	if opts.Timeout == 0 {
		opts.Timeout = MailerTimeoutDefault
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = MailerDialTimeoutDefault
	}
	if opts.GreetingTimeout == 0 {
		opts.GreetingTimeout = MailerGreetingTimeoutDefault
	}
	if opts.DataTimeout == 0 {
		opts.DataTimeout = MailerDataTimeoutDefault
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FQDN == nil {
		opts.FQDN = HostFQDN
	}
	return &Mailer{opts: opts, fqdn: sync.OnceValue(opts.FQDN), conns: make(map[string]*mailboxConn)}
}

// Send delivers msg through mb. Every failure is a *DeliveryError; one of
// kind DeliveryUnknown means the final dot went out without an answer, so
// the message may have been delivered and must not be sent again. No phase
// runs past ctx's deadline, and the connection is closed as soon as ctx
// ends (the tick's deadline, or a signal's grace); a session cut so before
// the dot is DeliveryCancelled, after it DeliveryUnknown with TickCut. A
// mailbox that requires TLS on a server offering no STARTTLS is
// DeliveryMailboxRefused, before anything is sent. The error's text never holds the mailbox's
// password, in any form a server may echo it in.
func (m *Mailer) Send(ctx context.Context, mb Mailbox, msg *Message) error {
	err := m.send(ctx, mb, msg)
	if err == nil {
		return nil
	}
	de := *ClassifyDelivery(err)
	var password string
	if mb.PasswordEnv != "" {
		password, _ = m.opts.LookupEnv(mb.PasswordEnv)
	}
	de.Err = redact.Error(de.Err, password)
	return &de
}

func (m *Mailer) send(ctx context.Context, mb Mailbox, msg *Message) error {
	gm, err := buildMsg(msg, m.opts.Now())
	if err != nil {
		return &DeliveryError{Kind: DeliveryRejected, Err: err}
	}
	hard, _ := ctx.Deadline()
	conn := m.conn(mb.Address)
	conn.mu.Lock()
	defer conn.mu.Unlock()

	// A reused connection may have been dropped by the server while idle:
	// a failure before MAIL FROM was accepted sent nothing, so redial once.
	for attempt := 0; ; attempt++ {
		reused := conn.smtp != nil
		if !reused {
			if err := m.dial(ctx, mb, conn, hard); err != nil {
				de := cutByTick(ctx, ClassifyDelivery(&PhaseError{Phase: PhaseConnect, Err: err}), hard)
				if attempt == 0 && m.tokenRefused(ctx, mb, conn, de) {
					continue
				}
				return de
			}
		}
		stop := conn.wire.closeWhenDone(ctx)
		err := m.transact(conn, gm, hard)
		stop()
		if err == nil {
			return nil
		}
		de := cutByTick(ctx, ClassifyDelivery(err), hard)
		if de.ConnLost() {
			// No SMTP reply, a reply cut at its bound, or the server is
			// closing: the connection is unusable.
			conn.drop()
			if reused && attempt == 0 && de.Phase == PhaseMail && de.Code == 0 && de.Kind == DeliveryTransient && ctx.Err() == nil {
				continue
			}
		}
		return de
	}
}

// transact runs one mail transaction, each phase under its own deadline.
func (m *Mailer) transact(conn *mailboxConn, gm *mail.Msg, hard time.Time) error {
	sc, wire := conn.smtp, conn.wire
	from, err := gm.GetSender(false)
	if err != nil {
		return &DeliveryError{Kind: DeliveryRejected, Err: err}
	}
	rcpts, err := gm.GetRecipients()
	if err != nil {
		return &DeliveryError{Kind: DeliveryRejected, Err: err}
	}
	wire.phase(m.opts.Timeout, hard)
	if err := needsSMTPUTF8(sc, from, rcpts); err != nil {
		return err
	}
	if err := sc.Mail(from); err != nil {
		_ = sc.Reset()
		return &PhaseError{Phase: PhaseMail, Err: err}
	}
	for _, rcpt := range rcpts {
		if err := sc.Rcpt(rcpt); err != nil {
			_ = sc.Reset()
			return &PhaseError{Phase: PhaseRcpt, Err: err}
		}
	}
	w, err := sc.Data()
	if err != nil {
		_ = sc.Reset()
		return &PhaseError{Phase: PhaseData, Err: err}
	}
	if _, err := gm.WriteTo(w); err != nil {
		// The final dot was not written: the server cannot have accepted.
		return &PhaseError{Phase: PhaseData, Err: err}
	}
	// From here the server may have the whole message: an error without a
	// reply leaves the delivery unknown.
	wire.phase(m.opts.DataTimeout, hard)
	if err := w.Close(); err != nil {
		if wire.failedWrite() {
			// The final dot never left: nothing can have been accepted.
			return &PhaseError{Phase: PhaseData, Err: err}
		}
		return &PhaseError{Phase: PhaseDataEnd, Err: err}
	}
	return nil
}

// needsSMTPUTF8 refuses a message whose sender or recipient has a UTF-8
// local part when the server does not offer SMTPUTF8 (RFC 6531): sent
// anyway, it would be mangled or bounced by someone else's server. Domains
// are in A-label form already, so only local parts matter.
func needsSMTPUTF8(sc *smtp.Client, from string, rcpts []string) error {
	for _, a := range append([]string{from}, rcpts...) {
		if address.LocalIsASCII(a) {
			continue
		}
		if ok, _ := sc.Extension("SMTPUTF8"); ok {
			return nil
		}
		return &DeliveryError{Kind: DeliveryRejected, Phase: PhaseMail,
			Err: fmt.Errorf("the address %s has a non-ASCII local part and this mailbox's SMTP server does not offer SMTPUTF8: it cannot be sent from here", a)}
	}
	return nil
}

// tokenRefused says the server refused (535, 5.7.8) an oauth2 mailbox's
// access token, which the store then forgets: the grant was revoked or
// the provider retired the token before its expiry (a password change).
// The caller dials once more with a refreshed token, and a revoked grant
// then gets invalid_grant and pauses the mailbox for `mailbox authorize`.
func (m *Mailer) tokenRefused(ctx context.Context, mb Mailbox, conn *mailboxConn, de *DeliveryError) bool {
	if mb.OAuth2 == nil || conn.token == "" || de.Kind != DeliveryMailboxAuthFailed || de.Code == 0 || ctx.Err() != nil {
		return false
	}
	return m.opts.Tokens.Refused(ctx, mb.ID, conn.token) == nil
}

func (m *Mailer) conn(mailbox string) *mailboxConn {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := strings.ToLower(mailbox)
	c := m.conns[key]
	if c == nil {
		c = &mailboxConn{}
		m.conns[key] = c
	}
	return c
}

func (m *Mailer) dial(ctx context.Context, mb Mailbox, conn *mailboxConn, hard time.Time) error {
	tlsConfig, err := mb.TLSConfig(m.opts.TLSConfig, mb.SMTP.Host)
	if err != nil {
		return err
	}
	opts, token, err := m.clientOptions(ctx, mb, tlsConfig)
	if err != nil {
		return err
	}
	conn.token = token
	// Connect first: the greeting name may be the connection's own address.
	wire, nc, err := m.connect(ctx, mb, tlsConfig, hard)
	if err != nil {
		return fmt.Errorf("mailbox %s: connect %s: %w", mb.Address, mb.SMTP.Addr(), err)
	}
	// The connection is closed when the Send's context ends, from the
	// greeting on.
	defer wire.closeWhenDone(ctx)()
	handed := false
	dialer := func(context.Context, string, string) (net.Conn, error) {
		if handed {
			return nil, errors.New("connection already used")
		}
		handed = true
		return nc, nil
	}
	opts = append(opts, mail.WithHELO(m.greetingName(mb, wire.LocalAddr())), mail.WithDialContextFunc(dialer))
	client, err := mail.NewClient(mb.SMTP.Host, opts...)
	if err != nil {
		_ = wire.Close()
		return fmt.Errorf("mailbox %s: %w", mb.Address, err)
	}
	// The dial itself was bounded by DialTimeout; ctx only carries the
	// tick's deadline, which the phases already honour.
	sc, err := client.DialToSMTPClientWithContext(context.WithoutCancel(ctx))
	if err != nil {
		_ = wire.Close()
		if mb.SMTP.TLS == TLSRequired && noStartTLSOffered(err) {
			return mb.startTLSMissing()
		}
		return fmt.Errorf("mailbox %s: connect %s: %w", mb.Address, mb.SMTP.Addr(), err)
	}
	// From here every reply is read through a replyReader: the dial's own
	// replies were bounded by the wire alone (see wireReadMax).
	boundReplies(sc.Text)
	conn.client, conn.smtp, conn.wire = client, sc, wire
	return nil
}

// connect dials the mailbox's server, bounded by DialTimeout and hard, and
// speaks TLS from the first byte for smtps://. wire holds the phase
// deadlines; nc is what SMTP talks over (wire, or TLS over it).
func (m *Mailer) connect(ctx context.Context, mb Mailbox, tlsConfig *tls.Config, hard time.Time) (*phasedConn, net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, m.opts.DialTimeout)
	defer cancel()
	if !hard.IsZero() {
		var cancelHard context.CancelFunc
		ctx, cancelHard = context.WithDeadline(ctx, hard)
		defer cancelHard()
	}
	raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", mb.SMTP.Addr())
	if err != nil {
		return nil, nil, err
	}
	wire := newPhasedConn(raw, m.opts.Timeout, m.opts.GreetingTimeout, hard)
	if mb.SMTP.TLS != TLSImplicit {
		return wire, wire, nil
	}
	tc := tls.Client(wire, tlsConfig)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = wire.Close()
		return nil, nil, err
	}
	// The handshake used the greeting's clock; the greeting gets a fresh one.
	wire.wait(m.opts.GreetingTimeout)
	return wire, tc, nil
}

// greetingName is what mb announces in EHLO/HELO on a connection from
// local: its own helo, else RINDA_SMTP_HELO, else the host's FQDN, else the
// address literal of local. Never a bare label (greeting.go).
func (m *Mailer) greetingName(mb Mailbox, local net.Addr) string {
	switch {
	case mb.HELO != "":
		return mb.HELO
	case m.opts.HELO != "":
		return m.opts.HELO
	}
	if name := m.fqdn(); name != "" {
		return name
	}
	return addressLiteral(local)
}

// clientOptions are the go-mail options for mb; token is the OAuth2
// access token it logs in with (empty for a password).
func (m *Mailer) clientOptions(ctx context.Context, mb Mailbox, tlsConfig *tls.Config) (opts []mail.Option, token string, err error) {
	ep := mb.SMTP
	opts = []mail.Option{
		mail.WithPort(ep.Port),
		mail.WithTimeout(m.opts.Timeout),
		mail.WithTLSConfig(tlsConfig),
		// One NOOP and one RSET per message would double the round trips;
		// Send redials instead when a reused connection turns out dead.
		mail.WithoutNoop(),
		mail.WithoutRset(),
	}
	switch ep.TLS {
	case TLSImplicit:
		// The dialer speaks TLS from the first byte; go-mail then sees a
		// TLS connection (and offers PLAIN/LOGIN over it) without STARTTLS.
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	case TLSRequired:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	}
	if ep.Username == "" {
		return opts, "", nil
	}
	password, err := Credential(ctx, mb, m.opts.LookupEnv, m.opts.Tokens)
	if err != nil {
		return nil, "", err
	}
	// Hidden from every log line and stored text from here on.
	redact.Register(password)
	if mb.OAuth2 != nil {
		// The access token goes with XOAUTH2, or OAUTHBEARER where a
		// server offers only that.
		return append(opts, mail.WithSMTPAuthCustom(mailauth.NewSMTPBearer(ep.Username, password, ep.Host, ep.Port))), password, nil
	}
	// Without TLS only loopback gets here (ParseSMTPURL upgrades the
	// rest to TLSRequired); PLAIN is what local test servers speak.
	auth := mail.SMTPAuthAutoDiscover
	if ep.TLS == TLSOpportunistic {
		auth = mail.SMTPAuthPlain
	}
	return append(opts, mail.WithSMTPAuth(auth), mail.WithUsername(ep.Username), mail.WithPassword(password)), "", nil
}

func (c *mailboxConn) drop() {
	if c.smtp != nil {
		_ = c.smtp.Close()
	}
	c.client, c.smtp, c.wire = nil, nil, nil
}

// Close quits every open connection, all within one short deadline: a hung
// server must not hold the tick's exit.
func (m *Mailer) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	deadline := time.Now().Add(mailerCloseTimeout)
	var errs []error
	for addr, c := range m.conns {
		c.mu.Lock()
		if c.smtp != nil {
			c.wire.phase(mailerCloseTimeout, deadline)
			if err := c.client.CloseWithSMTPClient(c.smtp); err != nil {
				errs = append(errs, fmt.Errorf("mailbox %s: %w", addr, err))
			}
			_ = c.smtp.Close()
		}
		c.client, c.smtp, c.wire = nil, nil, nil
		c.mu.Unlock()
	}
	return errors.Join(errs...)
}

func buildMsg(msg *Message, now time.Time) (*mail.Msg, error) {
	// No User-Agent or X-Mailer: cold email must not carry a library
	// fingerprint.
	gm := mail.NewMsg(mail.WithNoDefaultUserAgent())
	var err error
	if msg.FromName != "" {
		err = gm.FromFormat(msg.FromName, msg.From)
	} else {
		err = gm.From(msg.From)
	}
	if err != nil {
		return nil, fmt.Errorf("from %q: %w", msg.From, err)
	}
	if msg.ReturnPath != "" {
		if err := gm.EnvelopeFrom(msg.ReturnPath); err != nil {
			return nil, fmt.Errorf("return path %q: %w", msg.ReturnPath, err)
		}
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
	if len(msg.ListUnsubscribe) > 0 {
		urls := make([]string, len(msg.ListUnsubscribe))
		for i, u := range msg.ListUnsubscribe {
			urls[i] = "<" + singleLine(u) + ">"
		}
		gm.SetGenHeader(mail.HeaderListUnsubscribe, strings.Join(urls, ", "))
		if msg.OneClick {
			gm.SetGenHeader(mail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
		}
	}
	gm.SetBodyString(mail.TypeTextPlain, msg.Body)
	return gm, nil
}
