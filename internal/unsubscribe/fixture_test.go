package unsubscribe_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// fixture is a workspace with n leads (lead1@example.test ...), each
// enrolled in campaign q4; lead1 is also enrolled in campaign q5. Tokens
// are signed with the workspace's key as the email tick signs them.
type fixture struct {
	t    *testing.T
	db   *storetest.DB
	pool *pgxpool.Pool // the least-privilege tick role, as serve may run
	key  []byte
}

func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	db := storetest.New(t)
	f := &fixture{t: t, db: db, pool: db.TickPool(t)}
	f.exec(`INSERT INTO workspaces (name) VALUES ('acme'), ('globex')`)
	f.exec(`INSERT INTO campaigns (workspace_id, name) SELECT id, 'q4' FROM workspaces WHERE name = 'acme'`)
	f.exec(`INSERT INTO campaigns (workspace_id, name) SELECT id, 'q5' FROM workspaces WHERE name = 'acme'`)
	f.exec(`INSERT INTO leads (workspace_id, first_name, email)
		SELECT w.id, 'Lead' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, $1::int) g WHERE w.name = 'acme'`, n)
	f.exec(`INSERT INTO enrollments (campaign_id, lead_id, workspace_id)
		SELECT c.id, l.id, l.workspace_id FROM leads l JOIN campaigns c ON c.workspace_id = l.workspace_id AND c.name = 'q4'`)
	f.exec(`INSERT INTO enrollments (campaign_id, lead_id, workspace_id)
		SELECT c.id, l.id, l.workspace_id FROM leads l JOIN campaigns c ON c.workspace_id = l.workspace_id AND c.name = 'q5'
		WHERE l.email = 'lead1@example.test'`)
	var ws int64
	if err := db.Pool.QueryRow(context.Background(), `SELECT id FROM workspaces WHERE name = 'acme'`).Scan(&ws); err != nil {
		t.Fatal(err)
	}
	key, err := store.UnsubscribeKey(context.Background(), f.pool, ws)
	if err != nil {
		t.Fatal(err)
	}
	f.key = key
	return f
}

func (f *fixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Pool.Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

func (f *fixture) str(sql string, args ...any) string {
	f.t.Helper()
	var s string
	if err := f.db.Pool.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func (f *fixture) count(sql string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.db.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// token is the token of lead n's q4 enrollment.
func (f *fixture) token(n int) string {
	f.t.Helper()
	var id int64
	err := f.db.Pool.QueryRow(context.Background(), `SELECT e.id FROM enrollments e JOIN leads l ON l.id = e.lead_id
		JOIN campaigns c ON c.id = e.campaign_id WHERE c.name = 'q4' AND l.email = $1`, fmt.Sprintf("lead%d@example.test", n)).Scan(&id)
	if err != nil {
		f.t.Fatal(err)
	}
	return unsubscribe.Sign(f.key, id)
}

// state is everything an unsubscribe may change, to compare before and after.
func (f *fixture) state() string {
	f.t.Helper()
	return f.str(`SELECT concat_ws(' | ',
		(SELECT string_agg(l.email || ':' || c.name || '=' || e.status, ',' ORDER BY e.id)
		 FROM enrollments e JOIN leads l ON l.id = e.lead_id JOIN campaigns c ON c.id = e.campaign_id WHERE e.status <> 'active'),
		(SELECT string_agg(coalesce(email, '-') || '=' || reason, ',' ORDER BY email) FROM suppressions),
		(SELECT string_agg(enrollment_id || '=' || via, ',' ORDER BY enrollment_id) FROM unsubscribes))`)
}

// serve runs the server on a real loopback listener until the test ends.
func serve(t *testing.T, h http.Handler, opts unsubscribe.ServeOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- unsubscribe.Serve(ctx, ln, h, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve after cancel: %v, want a clean shutdown", err)
		}
	})
	return "http://" + ln.Addr().String()
}

type response struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, client *http.Client, method, u string, body io.Reader, contentType string) response {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

// oneClick is the RFC 8058 POST a mail provider sends.
func oneClick(t *testing.T, client *http.Client, u string) response {
	t.Helper()
	return do(t, client, http.MethodPost, u, strings.NewReader("List-Unsubscribe=One-Click"), "application/x-www-form-urlencoded")
}

// oneClickErr is oneClick for goroutines: it returns the error.
func oneClickErr(client *http.Client, u string) (int, error) {
	resp, err := client.Post(u, "application/x-www-form-urlencoded", strings.NewReader(url.Values{"List-Unsubscribe": {"One-Click"}}.Encode()))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// generous are server bounds no load on a shared CI machine reaches: the
// tests assert what the server does, not how fast.
var generous = unsubscribe.ServeOptions{ReadTimeout: 2 * time.Minute, WriteTimeout: 2 * time.Minute, ReadHeaderTimeout: time.Minute}

func newListener() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
