package reliability

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// Shape of one email kill: killEmailLeads leads, two steps each, over two
// mailboxes whose server answers every command after killEmailReplyDelay.
const (
	killEmailLeads      = 24
	killEmailReplyDelay = 4 * time.Millisecond
	// killEmailLease exceeds --max-duration plus the 1 s SMTP grace.
	killEmailLease = 3 * time.Second
)

// emailKill is what one kill left behind.
type emailKill struct {
	unknown   int // steps left 'sending' by a kill: delivery_unknown, shown to an operator
	delivered int // of those, how many the server had in fact accepted
}

// TestEmailTickSurvivesSIGKILL kills an email tick at a seeded random
// moment, runs recovery ticks after the lease, and checks that no step
// reached the server twice and that every step a kill left in doubt is
// visible: its enrollment and sends row are delivery_unknown, the row keeps
// the Message-ID as evidence.
func TestEmailTickSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	n := iterations(5, 100)
	results := runKills(t, n, 2, 900*time.Millisecond, killEmailOnce)
	unknown, delivered := 0, 0
	for _, r := range results {
		unknown += r.unknown
		delivered += r.delivered
	}
	t.Logf("%d kills: 0 steps sent twice, %d steps left in the crash window (%d of them accepted by the server), all marked delivery_unknown for an operator", n, unknown, delivered)
	figure(t, "email_kills", n)
	figure(t, "email_kill_steps_sent_twice", 0) // any duplicate fails the test above
	figure(t, "email_kill_crash_window_cases", unknown)
	figure(t, "email_kill_crash_window_delivered", delivered)
}

func killEmailOnce(t *testing.T, delay time.Duration) emailKill {
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{})
	proxy := testkit.SlowProxy(t, net.JoinHostPort(srv.Host(), strconv.Itoa(srv.Port())), killEmailReplyDelay)
	env := map[string]string{"DATABASE_URL": db.URL}
	for _, args := range [][]string{
		{"import", "leads", "--workspace", "acme", writeFile(t, "leads.csv", leadsCSV("e", 0, killEmailLeads))},
		{"import", "campaign", writeFile(t, "campaign.yaml", campaignYAML("acme", "q4",
			mailbox{address: "sdr01@acme.test", smtpURL: "smtp://" + proxy},
			mailbox{address: "sdr02@acme.test", smtpURL: "smtp://" + proxy}))},
		{"enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"},
	} {
		if res := rindactl(t, env, args...); res.code != 0 {
			t.Fatalf("rindactl %v: %s", args, res)
		}
	}
	sqlExec(t, db, `UPDATE enrollments SET next_send_at = now() - interval '1 second'`)

	tickEnv := map[string]string{"DATABASE_URL": db.TickURL()}
	args := []string{"email", "tick", "--batch", "8", "--concurrency", "2", "--lease", killEmailLease.String(), "--max-duration", "1500ms"}
	killAfter(t, db, tickEnv, args, delay)

	// Recover: after the lease, tick until nothing is due or leased.
	for i := 0; ; i++ {
		var wait time.Duration
		if err := db.Pool.QueryRow(context.Background(), `SELECT coalesce(max(locked_until) - now(), '0') FROM enrollments
			WHERE status = 'active' AND locked_until > now()`).Scan(&wait); err != nil {
			t.Fatal(err)
		}
		due := queryInt(t, db, `SELECT count(*) FROM enrollments e JOIN leads l ON l.id = e.lead_id
			WHERE e.status = 'active' AND e.next_send_at <= now() AND l.email IS NOT NULL`)
		if wait <= 0 && due == 0 {
			break
		}
		// Each recovery tick must move the queue; how far depends on the
		// machine's load (a CI stress run needed more than 10 ticks for
		// 48 steps), so the bound is one step a tick.
		if i == 2*killEmailLeads {
			t.Fatalf("enrollments still due or leased after %d recovery ticks (%d due)", i, due)
		}
		time.Sleep(wait + 50*time.Millisecond)
		if res := rindactl(t, tickEnv, args...); res.code != 0 {
			t.Fatalf("recovery tick: %s", res)
		}
	}

	// No step reached the server twice.
	accepted := map[string]bool{} // message id
	seen := map[string]int{}      // recipient and step
	for _, m := range srv.Messages() {
		step := "1"
		if strings.HasPrefix(m.Header.Get("Subject"), "Re: ") {
			step = "2"
		}
		key := strings.Join(m.To, ",") + " step " + step
		if seen[key]++; seen[key] == 2 {
			t.Errorf("%s reached the server twice", key)
		}
		accepted[strings.Trim(m.Header.Get("Message-Id"), "<>")] = true
	}

	// Every accepted message is on record as sent, or in doubt.
	rows, err := db.Pool.Query(context.Background(), `SELECT s.message_id, s.status, e.status, coalesce(e.last_error, '')
		FROM sends s JOIN enrollments e ON e.id = s.enrollment_id`)
	if err != nil {
		t.Fatal(err)
	}
	k := emailKill{}
	recorded := map[string]bool{}
	for rows.Next() {
		var id, sendStatus, enrollStatus, lastErr string
		if err := rows.Scan(&id, &sendStatus, &enrollStatus, &lastErr); err != nil {
			t.Fatal(err)
		}
		recorded[id] = true
		switch {
		case sendStatus == "sending":
			t.Errorf("send %s is still 'sending' after the recovery ticks: an operator would not see it", id)
		case sendStatus == "delivery_unknown":
			k.unknown++
			if accepted[id] {
				k.delivered++
			}
			if enrollStatus != "delivery_unknown" || !strings.Contains(lastErr, "delivery unknown") {
				t.Errorf("send %s is delivery_unknown but its enrollment is %s (%q): an operator would not see it", id, enrollStatus, lastErr)
			}
		case sendStatus == "failed" && accepted[id]:
			t.Errorf("send %s is recorded failed but the server accepted it", id)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id := range accepted {
		if !recorded[id] {
			t.Errorf("the server accepted %s, which has no sends row", id)
		}
	}

	// Every enrollment ended: completed, or delivery_unknown in the crash window.
	if bad := queryInt(t, db, `SELECT count(*) FROM enrollments WHERE NOT (status = 'completed'
		OR status = 'delivery_unknown' AND last_error LIKE '%delivery unknown%')`); bad != 0 {
		t.Errorf("%d enrollments neither completed nor delivery_unknown", bad)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM enrollments`); got != killEmailLeads {
		t.Errorf("%d enrollments, want %d", got, killEmailLeads)
	}
	return k
}
