package inbox

import (
	"context"
	"crypto/tls"
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
	stop        func() bool
	uidValidity uint32
}

// dial connects, logs in and examines INBOX. Implicit TLS for imaps://,
// STARTTLS for imap://, and clear text only for imap:// on a loopback host.
// The whole session ends at deadline, or when ctx ends. tlsConfig is the
// mailbox's (sequence.Mailbox.TLSConfig).
func dial(ctx context.Context, ep sequence.IMAPEndpoint, password string, tlsConfig *tls.Config, deadline time.Time) (*reader, error) {
	d := net.Dialer{Deadline: deadline}
	conn, err := d.DialContext(ctx, "tcp", ep.Addr())
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(deadline)
	cfg := tlsConfig
	var c *imapclient.Client
	switch ep.TLS {
	case sequence.TLSImplicit:
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS: %w", err)
		}
		c = imapclient.New(tc, nil)
	case sequence.TLSRequired:
		if c, err = imapclient.NewStartTLS(conn, &imapclient.Options{TLSConfig: cfg}); err != nil {
			return nil, fmt.Errorf("STARTTLS: %w", err)
		}
	default:
		c = imapclient.New(conn, nil)
	}
	r := &reader{c: c, stop: context.AfterFunc(ctx, func() { c.Close() })}
	if err := c.Login(ep.Username, password).Wait(); err != nil {
		r.close()
		return nil, fmt.Errorf("login as %s: %w", ep.Username, err)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		r.close()
		return nil, fmt.Errorf("examine INBOX: %w", err)
	}
	r.uidValidity = sel.UIDValidity
	return r, nil
}

// newUIDs lists the UIDs above last, oldest first, at most max of them.
func (r *reader) newUIDs(last uint32, max int) ([]uint32, error) {
	var set imap.UIDSet
	set.AddRange(imap.UID(last+1), 0) // last+1:*
	data, err := r.c.UIDSearch(&imap.SearchCriteria{UID: []imap.UIDSet{set}}, nil).Wait()
	if err != nil {
		return nil, fmt.Errorf("search INBOX: %w", err)
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
		return nil, fmt.Errorf("fetch INBOX: %w", err)
	}
	msgs := make([]fetched, 0, len(bufs))
	for _, b := range bufs {
		msgs = append(msgs, fetched{uid: uint32(b.UID), raw: b.FindBodySection(peekSection)})
	}
	slices.SortFunc(msgs, func(a, b fetched) int { return int(int64(a.uid) - int64(b.uid)) })
	return msgs, nil
}

func (r *reader) close() {
	r.stop()
	_ = r.c.Logout().Wait()
	_ = r.c.Close()
}
