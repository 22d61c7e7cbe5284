package sequence

import (
	"bytes"
	"context"
	"io"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// Issue 25: every message the email tick sends carries List-Unsubscribe
// with the enrollment's token: the one-click URL of `unsubscribe serve`
// (with List-Unsubscribe-Post) when the tick knows where it is reached, and
// always a mailto: to the sending mailbox; {{.UnsubscribeURL}} renders the
// first. A campaign's unsubscribe_url still takes the one-click place, and
// may carry {{.UnsubscribeToken}}. Before, a message carried the header
// only with an unsubscribe_url, and nothing received it.
func TestTickPutsTheUnsubscribeTokenInEveryMessage(t *testing.T) {
	t.Parallel()
	steps := "steps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"Hello {{.FirstName}}. Leave: {{.UnsubscribeURL}}\"\n"
	for _, tc := range []struct {
		name, base, extra string
		oneClick          string // the one-click URL before the token; "" none
	}{
		{name: "server", base: "https://u.acme.test/x", oneClick: "https://u.acme.test/x/"},
		{name: "mailto only"},
		{name: "own page", base: "https://u.acme.test", extra: "unsubscribe_url: \"https://acme.example/leave?t={{.UnsubscribeToken}}\"\n", oneClick: "https://acme.example/leave?t="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 1, steps: steps, extraYAML: tc.extra})
			if rep := f.tick(TickOptions{UnsubscribeBaseURL: strings.TrimRight(tc.base, "/")}); rep.Sent != 3 {
				t.Fatalf("sent %d, want 3: %+v", rep.Sent, rep.Outcomes)
			}
			var key []byte
			if err := f.pool.QueryRow(context.Background(), `SELECT key FROM unsubscribe_keys`).Scan(&key); err != nil {
				t.Fatalf("the tick created no workspace key: %v", err)
			}
			ids := map[int64]bool{}
			for _, m := range f.srv.Messages() {
				header := m.Header.Get("List-Unsubscribe")
				urls := regexp.MustCompile(`<([^>]+)>`).FindAllStringSubmatch(header, -1)
				want := 1
				if tc.oneClick != "" {
					want = 2
				}
				if len(urls) != want {
					t.Fatalf("List-Unsubscribe = %q, want %d URLs", header, want)
				}
				mailto := urls[len(urls)-1][1]
				tok := strings.TrimPrefix(mailto, "mailto:sdr01@acme.test?subject=unsubscribe%20")
				if tok == mailto || !unsubscribe.Verify(key, tok) {
					t.Fatalf("mailto: URL %q carries no valid token", mailto)
				}
				id, _ := unsubscribe.Parse(tok)
				ids[id] = true
				first := mailto
				if tc.oneClick != "" {
					first = urls[0][1]
					if first != tc.oneClick+tok {
						t.Errorf("one-click URL %q, want %q", first, tc.oneClick+tok)
					}
				}
				post := m.Header.Get("List-Unsubscribe-Post")
				if (post == "List-Unsubscribe=One-Click") != (tc.oneClick != "") {
					t.Errorf("List-Unsubscribe-Post = %q with one-click URL %q", post, tc.oneClick)
				}
				msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
				if !strings.Contains(strings.ReplaceAll(string(body), "=\r\n", ""), "Leave: "+first) {
					t.Errorf("body does not render {{.UnsubscribeURL}} as %q:\n%s", first, body)
				}
			}
			if n := f.count(`SELECT count(*) FROM enrollments WHERE id = ANY ($1)`, keys(ids)); n != 3 {
				t.Errorf("tokens name %d of the 3 enrollments", n)
			}
		})
	}
}

func keys(m map[int64]bool) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A template that shows {{.UnsubscribeURL}} with no URL to show fails to
// compose, naming the fix, rather than send a message without a link.
func TestComposeWithoutUnsubscribeURL(t *testing.T) {
	t.Parallel()
	c, err := ParseCampaign(strings.NewReader("workspace: acme\nname: q4\nmailboxes:\n  - address: a@acme.test\n    smtp_url: smtp://127.0.0.1:2525\nsteps:\n  - subject: Hi\n    body: \"Leave: {{.UnsubscribeURL}}\"\n"))
	if err != nil {
		t.Fatalf("a template using {{.UnsubscribeURL}} is refused at import: %v", err)
	}
	_, err = c.Compose(0, Lead{Email: "l@x.test"}, c.Mailboxes[0], "m@acme.test", nil)
	if err == nil || !strings.Contains(err.Error(), unsubscribe.BaseURLEnv) {
		t.Errorf("compose without a token or URL: %v, want an error naming %s", err, unsubscribe.BaseURLEnv)
	}
}
