package inbox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
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
	// date is the server's INTERNALDATE (zero when it sent none).
	date time.Time
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
	// wire meters what the server sends (wireLimits).
	wire *meteredConn
	stop func() bool
	// end is the session's end. The connection's deadline and the
	// session's context both fire at end, in either order: a read that
	// times out at end may return before the context's timer has run.
	end time.Time
}

// errSessionEnded marks a session cut by the tick itself (its deadline,
// the lease's end, or a signal): not the mailbox's failure.
var errSessionEnded = errors.New("IMAP session cut at the tick's deadline")

// errLogin marks a failure of the LOGIN or AUTHENTICATE command.
var errLogin = errors.New("login")

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
	// Every byte the IMAP library reads passes a meter first, above TLS.
	switch ep.TLS {
	case sequence.TLSImplicit:
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(r.session); err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		r.wire = newMeteredConn(tc, defaultWireLimits)
		r.c = imapclient.New(r.wire, nil)
	case sequence.TLSRequired:
		tc, err := startTLS(r.session, conn, cfg)
		if err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
		r.wire = newMeteredConn(tc, defaultWireLimits)
		r.c = imapclient.New(greeted(r.wire), nil)
	default:
		r.wire = newMeteredConn(conn, defaultWireLimits)
		r.c = imapclient.New(r.wire, nil)
	}
	if err := cred.login(r.c, ep); err != nil {
		return fmt.Errorf("%w as %s: %w", errLogin, ep.Username, r.wired(err))
	}
	sel, err := r.c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return fmt.Errorf("examine INBOX: %w", r.wired(err))
	}
	r.uidValidity = sel.UIDValidity
	return nil
}

// wired names the cap a server passed, when that is why err happened.
func (r *reader) wired(err error) error { return wireCause(r.wire, err) }

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

// search lists the INBOX's UIDs above last (and, unless since is zero,
// with an INTERNALDATE on or after since's day), as the server's ranges:
// never expanded UID by UID (imap.SearchData.AllUIDs counts a uint32 up
// to a range's end and never ends on one ending at 4294967295).
func (r *reader) search(last uint32, since time.Time) ([]imap.UIDRange, error) {
	if last == math.MaxUint32 {
		return nil, nil // no UID above the largest
	}
	var set imap.UIDSet
	set.AddRange(imap.UID(last+1), 0) // last+1:*
	criteria := &imap.SearchCriteria{UID: []imap.UIDSet{set}, Since: since}
	data, err := r.c.UIDSearch(criteria, nil).Wait()
	if err != nil {
		return nil, r.cut(fmt.Errorf("search INBOX: %w", r.wired(err)))
	}
	all, _ := data.All.(imap.UIDSet)
	return all, nil
}

var peekSection = &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: MessageBytesMax}}

// fetch reads the messages with these UIDs. Only the UIDs asked for and
// answered with a body are returned, once each, in the order asked.
func (r *reader) fetch(uids []uint32) ([]fetched, error) {
	var set imap.UIDSet
	for _, u := range uids {
		set.AddNum(imap.UID(u))
	}
	bufs, err := r.c.Fetch(set, &imap.FetchOptions{UID: true, InternalDate: true, BodySection: []*imap.FetchItemBodySection{peekSection}}).Collect()
	if err != nil {
		return nil, r.cut(fmt.Errorf("fetch INBOX: %w", r.wired(err)))
	}
	got := make(map[uint32]fetched, len(bufs))
	for _, b := range bufs {
		if len(b.BodySection) == 0 {
			continue // not the message: a flag update, or left out
		}
		raw := b.FindBodySection(peekSection)
		if raw == nil {
			raw = b.BodySection[0].Bytes
		}
		got[uint32(b.UID)] = fetched{uid: uint32(b.UID), raw: raw, date: b.InternalDate}
	}
	msgs := make([]fetched, 0, len(uids))
	for _, u := range uids {
		if m, ok := got[u]; ok {
			msgs = append(msgs, m)
			delete(got, u)
		}
	}
	return msgs, nil
}

// dateChunk UIDs have their INTERNALDATE fetched at once (a line each).
const dateChunk = 500

// resumeAfter finds, in a renumbered INBOX, the last UID of the messages
// dated before t (read under the old UIDVALIDITY): UIDs are given in
// arrival order, so it is the UID before the first message since t. The
// search starts a day before t's day (SINCE is a date in the server's time
// zone); messages dated exactly t are read again (acting twice changes
// nothing).
func (r *reader) resumeAfter(t time.Time) (uint32, error) {
	since, err := r.search(0, t.Add(-24*time.Hour))
	if err != nil {
		return 0, err
	}
	rs := uidRanges(since, 0)
	if len(rs) == 0 {
		// Nothing since: every message is older, hence read.
		all, err := r.search(0, time.Time{})
		return maxUID(uidRanges(all, 0)), err
	}
	last := uint32(lowest(rs, 1)[0] - 1)
	for {
		chunk := lowest(uidRanges(since, last), dateChunk)
		if len(chunk) == 0 {
			return last, nil
		}
		dates, err := r.dates(chunk)
		if err != nil {
			return 0, err
		}
		for _, u := range chunk {
			d, ok := dates[u]
			if !ok || !d.Before(t) {
				return last, nil
			}
			last = u
		}
	}
}

// dates fetches the INTERNALDATE of these UIDs.
func (r *reader) dates(uids []uint32) (map[uint32]time.Time, error) {
	var set imap.UIDSet
	for _, u := range uids {
		set.AddNum(imap.UID(u))
	}
	bufs, err := r.c.Fetch(set, &imap.FetchOptions{UID: true, InternalDate: true}).Collect()
	if err != nil {
		return nil, r.cut(fmt.Errorf("fetch INBOX dates: %w", r.wired(err)))
	}
	out := make(map[uint32]time.Time, len(bufs))
	for _, b := range bufs {
		if !b.InternalDate.IsZero() {
			out[uint32(b.UID)] = b.InternalDate
		}
	}
	return out, nil
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
