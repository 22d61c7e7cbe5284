package inbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
)

// startTLS upgrades a cleartext IMAP connection (RFC 9051 §6.2.1): the
// greeting, STARTTLS and its tagged OK, then the TLS handshake. It is done
// here, not by the IMAP library, so that the bytes after the handshake
// reach the library through a wireMeter too (the library would put TLS
// under the meter). The cleartext part is metered as well.
func startTLS(ctx context.Context, conn net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	m := newMeteredConn(conn, defaultWireLimits)
	br := bufio.NewReader(m)
	greeting, err := readWireLine(br)
	if err != nil {
		return nil, wireCause(m, fmt.Errorf("greeting: %w", err))
	}
	if !strings.HasPrefix(strings.ToUpper(greeting), "* OK") {
		return nil, fmt.Errorf("greeting refused: %q", clip(cleanText(greeting), 200))
	}
	if _, err := io.WriteString(m, "S1 STARTTLS\r\n"); err != nil {
		return nil, err
	}
	for {
		line, err := readWireLine(br)
		if err != nil {
			return nil, wireCause(m, err)
		}
		if !strings.HasPrefix(line, "S1 ") {
			continue // untagged data before the answer
		}
		if !strings.HasPrefix(strings.ToUpper(line[3:]), "OK") {
			return nil, fmt.Errorf("refused: %q", clip(cleanText(line), 200))
		}
		break
	}
	// Cleartext sent after the OK and before TLS could be anyone's
	// (a STARTTLS injection): refused.
	if br.Buffered() > 0 {
		return nil, errors.New("the server sent cleartext after its STARTTLS answer")
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("handshake: %w", err)
	}
	return tc, nil
}

// readWireLine reads one line (its length capped by the meter below br).
func readWireLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// greetedConn replays a greeting before the connection's own bytes: after
// STARTTLS the server sends none, and the IMAP library waits for one.
type greetedConn struct {
	net.Conn
	r io.Reader
}

func greeted(c net.Conn) net.Conn {
	return greetedConn{Conn: c, r: io.MultiReader(bytes.NewReader([]byte("* OK TLS established\r\n")), c)}
}

func (c greetedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
