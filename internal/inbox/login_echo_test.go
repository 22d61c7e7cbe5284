package inbox

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/redact"
)

// echoIMAP is a hand-written IMAP server whose LOGIN (or AUTHENTICATE)
// fails with a NO that repeats the password: literal, URL-encoded and as
// base64 (servers that log credentials back). It answers everything else
// OK and counts logins.
func echoIMAP(t *testing.T) (addr string, logins func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	count := make(chan int, 1)
	count <- 0
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				w := bufio.NewWriter(c)
				say := func(s string) { w.WriteString(s + "\r\n"); w.Flush() }
				say("* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] echo ready")
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					fields := strings.Fields(line)
					if len(fields) < 2 {
						continue
					}
					tag, cmd := fields[0], strings.ToUpper(fields[1])
					switch cmd {
					case "CAPABILITY":
						say("* CAPABILITY IMAP4rev1 AUTH=PLAIN")
						say(tag + " OK done")
					case "LOGIN":
						count <- <-count + 1
						pw := strings.Trim(fields[len(fields)-1], `"`)
						say(tag + " NO [AUTHENTICATIONFAILED] Invalid credentials: " + pw + " (" + url.QueryEscape(pw) + ", " +
							base64.StdEncoding.EncodeToString([]byte("\x00user\x00"+pw)) + ")")
					case "LOGOUT":
						say("* BYE")
						say(tag + " OK bye")
						return
					default:
						say(tag + " OK done")
					}
				}
			}()
		}
	}()
	return l.Addr().String(), func() int { n := <-count; count <- n; return n }
}

// Issue 25, finding 5: an IMAP NO that repeats the password leaves it
// nowhere: not in the tick's error, the checkpoint's last error, the
// tick_runs row or the log lines.
func TestInboxLoginEchoingThePasswordLeavesItNowhere(t *testing.T) {
	t.Parallel()
	const secret = "im/ap+pass=word%42"
	f := newInboxFixture(t)
	addr, logins := echoIMAP(t)
	f.exec(`UPDATE mailboxes SET imap_url = $1, password_env = 'RINDA_TEST_ECHO_PW' WHERE address = 'sdr01@acme.test'`, "imap://sdr01@"+addr)
	f.exec(`UPDATE mailboxes SET imap_url = NULL WHERE address <> 'sdr01@acme.test'`)
	var logs strings.Builder
	_, err := RunTick(context.Background(), f.tickPool, TickOptions{
		LookupEnv: func(string) (string, bool) { return secret, true },
		Logger:    jsonLogger(&logs),
	})
	if err == nil || logins() == 0 {
		t.Fatalf("tick error %v after %d logins, want the login refused", err, logins())
	}
	texts := map[string]string{
		"the tick's error": err.Error(),
		"logs":             logs.String(),
		"checkpoints":      f.str(`SELECT coalesce(string_agg(last_error, ' '), '') FROM inbox_checkpoints`),
		"tick_runs":        f.str(`SELECT coalesce(string_agg(error, ' '), '') FROM tick_runs`),
	}
	if !strings.Contains(texts["checkpoints"], "AUTHENTICATIONFAILED") {
		t.Errorf("the checkpoint's last error %q does not keep the server's answer", texts["checkpoints"])
	}
	for what, text := range texts {
		if redact.Contains(text, secret) {
			t.Errorf("the password appears in %s: %s", what, text)
		}
	}
}

func jsonLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }
