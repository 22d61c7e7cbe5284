package inbox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/rindactl/rindactl/internal/sequence"
)

// MessageBytesMax is how much of each message is read: headers and the
// delivery report come first, attachments of a returned message are not
// needed.
const MessageBytesMax = 128 << 10

// fetched is one INBOX message: its UID and its first MessageBytesMax bytes.
type fetched struct {
	uid uint32
	raw []byte
}

// reader is one IMAP session on a mailbox's INBOX, opened read-only
// (EXAMINE, BODY.PEEK): reading never marks a message \Seen.
type reader struct {
	c           *imapclient.Client
	uidValidity uint32
	// session ends at the session's deadline or when the tick is told to
	// stop; then the connection is closed under the library.
	session context.Context
	cancel  context.CancelFunc
	raw     net.Conn
	stop    func() bool
	// end is the session's end. The connection's deadline and the
	// session's context both fire at end, in either order: a read that
	// times out at end may return before the context's timer has run.
	end time.Time
}

// errSessionEnded marks a session cut by the tick itself (its deadline,
// the lease's end, or a signal): not the mailbox's failure.
var errSessionEnded = errors.New("IMAP session cut at the tick's deadline")

// dial connects, logs in and examines INBOX. Implicit TLS for imaps://,
// STARTTLS for imap://, and clear text only for imap:// on a loopback host.
// The whole session ends at end, or when ctx ends: every read and write
// of the connection is bounded by end, whatever deadlines the IMAP library
// sets itself (it allows 30 s per response and 5 min per literal), and the
// connection is closed the moment the session ends.
func dial(ctx context.Context, ep sequence.IMAPEndpoint, cred credential, tlsConfig *tls.Config, end time.Time) (*reader, error) {
	session, cancel := context.WithDeadline(ctx, end)
	r := &reader{session: session, cancel: cancel, stop: func() bool { return false }, end: end}
	if err := r.open(ep, cred, tlsConfig, end); err != nil {
		err = r.cut(err)
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *reader) open(ep sequence.IMAPEndpoint, cred credential, tlsConfig *tls.Config, end time.Time) error {
	raw, err := (&net.Dialer{}).DialContext(r.session, "tcp", ep.Addr())
	if err != nil {
		return err
	}
	r.raw = raw
	r.stop = context.AfterFunc(r.session, func() { _ = raw.Close() })
	conn := boundedConn{Conn: raw, end: end}
	_ = conn.SetDeadline(end)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if tlsConfig != nil {
		cfg = tlsConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = ep.Host
	}
	switch ep.TLS {
	case sequence.TLSImplicit:
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(r.session); err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		r.c = imapclient.New(tc, nil)
	case sequence.TLSRequired:
		if r.c, err = imapclient.NewStartTLS(conn, &imapclient.Options{TLSConfig: cfg}); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
	default:
		r.c = imapclient.New(conn, nil)
	}
	if err := cred.login(r.c, ep.Username); err != nil {
		return fmt.Errorf("login as %s: %w", ep.Username, err)
	}
	sel, err := r.c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return fmt.Errorf("examine INBOX: %w", err)
	}
	r.uidValidity = sel.UIDValidity
	return nil
}

// cut marks err as the tick's own doing when the session had ended.
func (r *reader) cut(err error) error {
	if err != nil && (r.session.Err() != nil || !time.Now().Before(r.end)) {
		return fmt.Errorf("%w: %v", errSessionEnded, err)
	}
	return err
}

// boundedConn caps every deadline set on the connection at end.
type boundedConn struct {
	net.Conn
	end time.Time
}

func (c boundedConn) bound(t time.Time) time.Time {
	if t.IsZero() || t.After(c.end) {
		return c.end
	}
	return t
}

func (c boundedConn) SetDeadline(t time.Time) error      { return c.Conn.SetDeadline(c.bound(t)) }
func (c boundedConn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(c.bound(t)) }
func (c boundedConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.bound(t)) }

// newUIDs lists the UIDs above last, oldest first, at most max of them.
func (r *reader) newUIDs(last uint32, max int) ([]uint32, error) {
	var set imap.UIDSet
	set.AddRange(imap.UID(last+1), 0) // last+1:*
	data, err := r.c.UIDSearch(&imap.SearchCriteria{UID: []imap.UIDSet{set}}, nil).Wait()
	if err != nil {
		return nil, r.cut(fmt.Errorf("search INBOX: %w", err))
	}
	var uids []uint32
	for _, u := range data.AllUIDs() {
		// "n:*" always matches the last message, even below n.
		if uint32(u) > last {
			uids = append(uids, uint32(u))
		}
	}
	slices.Sort(uids)
	return uids[:min(len(uids), max)], nil
}

var peekSection = &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: MessageBytesMax}}

// fetch reads the messages with these UIDs, in UID order.
func (r *reader) fetch(uids []uint32) ([]fetched, error) {
	var set imap.UIDSet
	for _, u := range uids {
		set.AddNum(imap.UID(u))
	}
	bufs, err := r.c.Fetch(set, &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{peekSection}}).Collect()
	if err != nil {
		return nil, r.cut(fmt.Errorf("fetch INBOX: %w", err))
	}
	msgs := make([]fetched, 0, len(bufs))
	for _, b := range bufs {
		msgs = append(msgs, fetched{uid: uint32(b.UID), raw: b.FindBodySection(peekSection)})
	}
	slices.SortFunc(msgs, func(a, b fetched) int { return int(int64(a.uid) - int64(b.uid)) })
	return msgs, nil
}

func (r *reader) close() {
	if r.c != nil {
		if r.session.Err() == nil {
			_ = r.c.Logout().Wait()
		}
		_ = r.c.Close()
	}
	if r.raw != nil {
		_ = r.raw.Close()
	}
	r.stop()
	r.cancel()
}
