package unsubscribe_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// Issue 25: the RFC 8058 one-click POST suppresses the address and ends
// every active enrollment of it in the workspace, in every campaign, at once.
func TestOneClickPostUnsubscribes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	base := serve(t, unsubscribe.NewHandler(f.pool, unsubscribe.HandlerOptions{}), unsubscribe.ServeOptions{})
	r := oneClick(t, http.DefaultClient, base+"/"+f.token(1))
	if r.status != http.StatusOK || !strings.Contains(r.body, "You are unsubscribed") {
		t.Fatalf("one-click POST: %d %s", r.status, r.body)
	}
	if got, want := f.state(), "lead1@example.test:q4=unsubscribed,lead1@example.test:q5=unsubscribed | lead1@example.test=unsubscribed | "; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "=http") {
		t.Errorf("state after one-click = %q, want %q and one http use", got, want)
	}
	// Behind a proxy at a prefix, and as multipart/form-data (RFC 8058
	// allows both encodings).
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("List-Unsubscribe", "One-Click")
	_ = mw.Close()
	r = do(t, http.DefaultClient, http.MethodPost, base+"/unsubscribe/u/"+f.token(2), &body, mw.FormDataContentType())
	if r.status != http.StatusOK {
		t.Fatalf("multipart one-click POST: %d %s", r.status, r.body)
	}
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'active'`); n != 1 {
		t.Errorf("%d active enrollments left, want 1 (lead3)", n)
	}
}

// Issue 25: GET shows a plain page with one button and changes nothing (a
// link scanner opening it unsubscribes no one); the button's POST is not a
// replay of the GET.
func TestConfirmationPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	base := serve(t, unsubscribe.NewHandler(f.pool, unsubscribe.HandlerOptions{}), unsubscribe.ServeOptions{})
	u := base + "/" + f.token(1)
	before := f.state()
	for range 3 {
		r := do(t, http.DefaultClient, http.MethodGet, u, nil, "")
		if r.status != http.StatusOK {
			t.Fatalf("GET: %d %s", r.status, r.body)
		}
		for _, want := range []string{`<form method="post">`, `name="List-Unsubscribe" value="One-Click"`, `<button type="submit">`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("page lacks %q:\n%s", want, r.body)
			}
		}
		for _, banned := range []string{"<script", "<img", "lead1", "example.test", "http://", "https://"} {
			if strings.Contains(r.body, banned) {
				t.Errorf("page holds %q (no script, tracking or address):\n%s", banned, r.body)
			}
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
			t.Errorf("Content-Security-Policy = %q", csp)
		}
	}
	if r := do(t, http.DefaultClient, http.MethodHead, u, nil, ""); r.status != http.StatusOK {
		t.Errorf("HEAD: %d", r.status)
	}
	if after := f.state(); after != before {
		t.Fatalf("GET changed the database: %q -> %q", before, after)
	}
	// The button: the form's fields, posted back to the page's URL.
	r := oneClick(t, http.DefaultClient, u)
	if r.status != http.StatusOK {
		t.Fatalf("the page's POST after GET: %d %s", r.status, r.body)
	}
	if got := f.state(); !strings.Contains(got, "lead1@example.test=unsubscribed") {
		t.Errorf("state after the button = %q", got)
	}
	if r := do(t, http.DefaultClient, http.MethodGet, u, nil, ""); r.status != http.StatusBadRequest || !strings.Contains(r.body, "used already") {
		t.Errorf("GET of a used token: %d %s", r.status, r.body)
	}
}

// Issue 25: a bad token gets 400 and changes nothing, by GET and by POST.
func TestBadTokens(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	base := serve(t, unsubscribe.NewHandler(f.pool, unsubscribe.HandlerOptions{}), unsubscribe.ServeOptions{})
	good := f.token(1)
	var missing int64
	if err := f.db.Pool.QueryRow(context.Background(), `SELECT max(id) + 1000 FROM enrollments`).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	forged := []byte(good)
	forged[len(forged)-1] = map[bool]byte{true: 'b', false: 'a'}[forged[len(forged)-1] == 'a']
	bad := map[string]string{
		"malformed":                    "not-a-token",
		"too short":                    good[:20],
		"a MAC changed":                string(forged),
		"another key":                  unsubscribe.Sign(bytes.Repeat([]byte{9}, unsubscribe.KeySize), 1),
		"an enrollment that is absent": unsubscribe.Sign(f.key, missing),
	}
	before := f.state()
	for name, tok := range bad {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			var r response
			if method == http.MethodPost {
				r = oneClick(t, http.DefaultClient, base+"/"+tok)
			} else {
				r = do(t, http.DefaultClient, method, base+"/"+tok, nil, "")
			}
			if r.status != http.StatusBadRequest || !strings.Contains(r.body, "not valid") {
				t.Errorf("%s, %s: %d %s", name, method, r.status, r.body)
			}
		}
	}
	// Not a one-click body, a method the server does not take, a body
	// over the bound, the root: no change either.
	for _, tc := range []struct {
		name   string
		method string
		body   string
		ctype  string
		want   int
	}{
		{"empty POST", http.MethodPost, "", "", http.StatusBadRequest},
		{"other field", http.MethodPost, "List-Unsubscribe=Maybe", "application/x-www-form-urlencoded", http.StatusBadRequest},
		{"huge body", http.MethodPost, "List-Unsubscribe=One-Click&x=" + strings.Repeat("a", 1<<20), "application/x-www-form-urlencoded", http.StatusBadRequest},
		{"PUT", http.MethodPut, "List-Unsubscribe=One-Click", "application/x-www-form-urlencoded", http.StatusMethodNotAllowed},
	} {
		r := do(t, http.DefaultClient, tc.method, base+"/"+good, strings.NewReader(tc.body), tc.ctype)
		if r.status != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, r.status, tc.want)
		}
	}
	if r := do(t, http.DefaultClient, http.MethodGet, base+"/", nil, ""); r.status != http.StatusNotFound {
		t.Errorf("GET /: %d", r.status)
	}
	if after := f.state(); after != before {
		t.Errorf("bad requests changed the database: %q -> %q", before, after)
	}
	if r := do(t, http.DefaultClient, http.MethodGet, base+"/healthz", nil, ""); r.status != http.StatusOK {
		t.Errorf("GET /healthz: %d", r.status)
	}
}

// Issue 25: a token used once gets 400 the second time and changes nothing;
// of many uses of one token at once, exactly one counts.
func TestReplayedToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	base := serve(t, unsubscribe.NewHandler(f.pool, unsubscribe.HandlerOptions{}), generous)
	u := base + "/" + f.token(1)
	if r := oneClick(t, http.DefaultClient, u); r.status != http.StatusOK {
		t.Fatalf("first POST: %d %s", r.status, r.body)
	}
	after := f.state()
	// An operator re-activates lead1's q5 enrollment: a replay must not
	// end it again.
	f.exec(`UPDATE enrollments SET status = 'active' WHERE campaign_id = (SELECT id FROM campaigns WHERE name = 'q5')`)
	after = f.state()
	r := oneClick(t, http.DefaultClient, u)
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "used already") {
		t.Errorf("replayed POST: %d %s", r.status, r.body)
	}
	if got := f.state(); got != after {
		t.Errorf("the replay changed the database: %q -> %q", after, got)
	}

	u2 := base + "/" + f.token(2)
	const n = 25
	codes := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			codes[i], errs[i] = oneClickErr(http.DefaultClient, u2)
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for i := range n {
		switch {
		case errs[i] != nil:
			t.Errorf("request %d: %v", i, errs[i])
		case codes[i] == http.StatusOK:
			ok++
		case codes[i] != http.StatusBadRequest:
			t.Errorf("request %d: status %d, want 200 or 400", i, codes[i])
		}
	}
	if ok != 1 {
		t.Errorf("%d of %d simultaneous uses of one token succeeded, want exactly 1", ok, n)
	}
	if got := f.count(`SELECT count(*) FROM unsubscribes`); got != 2 {
		t.Errorf("%d token uses recorded, want 2", got)
	}
}

// Issue 25: 1,000 recipients unsubscribing at the same moment: every one
// answered 200, every address suppressed exactly once, every enrollment
// ended, nothing lost or doubled. The per-IP limit is off here (all
// requests come from one address); TestRateLimit covers it.
func TestThousandConcurrentPosts(t *testing.T) {
	t.Parallel()
	const n = 1000
	f := newFixture(t, n)
	base := serve(t, unsubscribe.NewHandler(f.pool, unsubscribe.HandlerOptions{RequestTimeout: 5 * time.Minute}), generous)
	urls := make([]string, n)
	rows, err := f.db.Pool.Query(context.Background(), `SELECT e.id FROM enrollments e JOIN campaigns c ON c.id = e.campaign_id WHERE c.name = 'q4' ORDER BY e.id`)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		urls[i] = base + "/" + unsubscribe.Sign(f.key, id)
		i++
	}
	if rows.Close(); i != n {
		t.Fatalf("%d enrollments, want %d", i, n)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	codes := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			codes[i], errs[i] = oneClickErr(client, urls[i])
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || codes[i] != http.StatusOK {
			t.Errorf("request %d: %d %v", i, codes[i], errs[i])
		}
	}
	for _, q := range []string{
		`SELECT count(*) FROM suppressions WHERE reason = 'unsubscribed'`,
		`SELECT count(DISTINCT email) FROM suppressions`,
		`SELECT count(*) FROM unsubscribes`,
		`SELECT count(*) FROM enrollments e JOIN campaigns c ON c.id = e.campaign_id WHERE c.name = 'q4' AND e.status = 'unsubscribed'`,
	} {
		if got := f.count(q); got != n {
			t.Errorf("%s = %d, want %d", q, got, n)
		}
	}
	if got := f.count(`SELECT count(*) FROM enrollments WHERE status <> 'unsubscribed'`); got != 0 {
		t.Errorf("%d enrollments not unsubscribed, want 0", got)
	}
}

// Issue 25: the server is rate limited per client IP: past the burst it
// answers 429 with Retry-After and does nothing. The clock stands still,
// so no token comes back during the test.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	now := time.Date(2026, 6, 5, 5, 40, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	for _, trusted := range []bool{false, true} {
		limiter := unsubscribe.NewIPLimiter(1.0/3600, 2, trusted, clock)
		base := serve(t, unsubscribe.NewHandler(f.pool, unsubscribe.HandlerOptions{Limiter: limiter}), unsubscribe.ServeOptions{})
		u := base + "/" + f.token(1)
		get := func(forwardedFor string) response {
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			if forwardedFor != "" {
				req.Header.Set("X-Forwarded-For", forwardedFor)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return response{status: resp.StatusCode, header: resp.Header}
		}
		for i := range 2 {
			if r := get("198.51.100.7"); r.status != http.StatusOK {
				t.Fatalf("trusted=%v request %d: %d, want 200 within the burst", trusted, i, r.status)
			}
		}
		before := f.state()
		r := get("198.51.100.7")
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
			t.Fatalf("trusted=%v: past the burst: %d (Retry-After %q), want 429 with Retry-After", trusted, r.status, r.header.Get("Retry-After"))
		}
		post, _ := http.NewRequest(http.MethodPost, u, strings.NewReader("List-Unsubscribe=One-Click"))
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		post.Header.Set("X-Forwarded-For", "198.51.100.7")
		if resp, err := http.DefaultClient.Do(post); err != nil || resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("trusted=%v: POST past the burst: %v %v, want 429", trusted, resp, err)
		} else {
			resp.Body.Close()
		}
		if after := f.state(); after != before {
			t.Errorf("a limited request changed the database: %q -> %q", before, after)
		}
		// Another client behind the same proxy: its own bucket only when
		// X-Forwarded-For is trusted; otherwise a client cannot pick one.
		want := http.StatusTooManyRequests
		if trusted {
			want = http.StatusOK
		}
		if r := get("203.0.113.9"); r.status != want {
			t.Errorf("trusted=%v: another X-Forwarded-For: %d, want %d", trusted, r.status, want)
		}
		if r := do(t, http.DefaultClient, http.MethodGet, base+"/healthz", nil, ""); r.status != http.StatusOK {
			t.Errorf("trusted=%v: /healthz is limited: %d", trusted, r.status)
		}
	}
}

// The server's bounds: an oversized header is refused before any handler
// runs, and the server stops cleanly when its context ends or it idles.
func TestServerBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	base := serve(t, unsubscribe.NewHandler(f.pool, unsubscribe.HandlerOptions{}), unsubscribe.ServeOptions{})
	req, _ := http.NewRequest(http.MethodGet, base+"/"+f.token(1), nil)
	req.Header.Set("X-Padding", strings.Repeat("a", 64<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("64 KiB header: %d, want 431", resp.StatusCode)
	}

	// --idle-exit: with no connection at all the server ends by itself.
	ln, err := newListener()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- unsubscribe.Serve(context.Background(), ln, unsubscribe.NewHandler(f.pool, unsubscribe.HandlerOptions{}), unsubscribe.ServeOptions{IdleExit: 100 * time.Millisecond})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("idle exit: %v, want a clean shutdown", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the server did not exit when idle")
	}
}
