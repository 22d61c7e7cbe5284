package reliability

import (
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// TestSMTPFaultsAreRetriedWithoutDuplicates scripts the far end's failures
// through a real SMTP server, runs email ticks until every step went out,
// and checks the classification and that no step was accepted twice.
func TestSMTPFaultsAreRetriedWithoutDuplicates(t *testing.T) {
	t.Parallel()
	const victim = "alan0@mail0.example"
	faults := []struct {
		name string
		rule smtptest.Rule
		// kind is the failure's classification, as recorded on the enrollment.
		kind string
	}{
		// Before the final dot: nothing can have been delivered. (A drop
		// after it is delivery_unknown and never retried: sequence tests.)
		{"server drops the connection at RCPT", smtptest.Rule{Stage: smtptest.StageRcpt, To: victim, Close: true, Times: 1}, "transient"},
		{"greylisting 451 at RCPT", smtptest.Rule{Stage: smtptest.StageRcpt, To: victim, Code: 451, Enhanced: "4.7.1", Message: "Greylisted, try again later", Times: 1}, "transient"},
		{"451 after DATA", smtptest.Rule{Stage: smtptest.StageData, To: victim, Code: 451, Enhanced: "4.3.0", Message: "Temporary local problem", Times: 1}, "transient"},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			db, srv, env := mailScenario(t, 4, "")
			srv.Script(f.rule)
			first := rindactl(t, env, "email", "tick")
			if first.code != 0 {
				t.Fatalf("first tick: %s", first)
			}
			lastErr := ""
			if err := db.Pool.QueryRow(t.Context(), `SELECT coalesce(e.last_error, '') FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = $1`, victim).Scan(&lastErr); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(lastErr, f.kind) {
				t.Errorf("after the fault the enrollment says %q, want a %s failure", lastErr, f.kind)
			}
			if due := queryInt(t, db, `SELECT count(*) FROM enrollments e JOIN leads l ON l.id = e.lead_id
				WHERE l.email = $1 AND e.status = 'active' AND e.next_send_at > now()`, victim); due != 1 {
				t.Errorf("the failed step is not waiting for a retry")
			}
			// Time passes: the retry is due.
			for range 4 {
				sqlExec(t, db, `UPDATE enrollments SET next_send_at = now() - interval '1 second' WHERE status = 'active'`)
				if res := rindactl(t, env, "email", "tick"); res.code != 0 {
					t.Fatalf("retry tick: %s", res)
				}
			}
			assertSentOnce(t, db, srv, 4)
		})
	}

	// A mailbox that requires TLS on a server without STARTTLS: nothing is
	// sent, the password never leaves, the mailbox pauses naming the
	// missing STARTTLS and no lead is charged an attempt (issue 37: it was
	// transient, one attempt per tick).
	t.Run("tls=required without STARTTLS", func(t *testing.T) {
		t.Parallel()
		db, srv, env := mailScenario(t, 2, "?tls=required")
		res := rindactl(t, env, "email", "tick")
		if res.code != 0 {
			t.Fatalf("tick: %s", res)
		}
		if srv.Accepted() != 0 || srv.Attempts("sdr01@acme.test") != 0 {
			t.Errorf("the server got %d messages and %d MAIL FROM over a connection without TLS", srv.Accepted(), srv.Attempts("sdr01@acme.test"))
		}
		if n := queryInt(t, db, `SELECT count(*) FROM enrollments WHERE status = 'active' AND attempts = 0 AND last_error LIKE '%did not offer STARTTLS%'`); n != 2 {
			t.Errorf("%d of 2 enrollments active, uncharged, naming the missing STARTTLS: %s", n, res)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM mailboxes WHERE paused_until > now() AND pause_reason LIKE 'mailbox_refused:%did not offer STARTTLS; the mailbox requires TLS%'`); n != 1 {
			t.Errorf("the mailbox is not paused for the missing STARTTLS: %s", res)
		}
		if strings.Contains(res.stdout+res.stderr, env["RINDA_SMTP_PASSWORD_SDR01"]) {
			t.Error("the SMTP password was printed")
		}
	})
}

// mailScenario imports n leads with an email, a campaign over one mailbox
// with a user on srv (smtp_url suffixed with query), and enrolls them all.
func mailScenario(t *testing.T, n int, query string) (*storetest.DB, *smtptest.Server, map[string]string) {
	t.Helper()
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "smtp-pw-9f2c"}})
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_SMTP_PASSWORD_SDR01": "smtp-pw-9f2c"}
	for _, args := range [][]string{
		{"import", "leads", "--workspace", "acme", writeFile(t, "leads.csv", leadsCSV("s", 0, n))},
		{"import", "campaign", writeFile(t, "campaign.yaml", campaignYAML("acme", "q4",
			mailbox{"sdr01@acme.test", srv.URL("sdr01") + query, "RINDA_SMTP_PASSWORD_SDR01"}))},
		{"enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"},
	} {
		if res := rindactl(t, env, args...); res.code != 0 {
			t.Fatalf("rindactl %v: %s", args, res)
		}
	}
	env["DATABASE_URL"] = db.TickURL()
	return db, srv, env
}

// assertSentOnce checks that each of n leads got both steps exactly once
// and every enrollment completed.
func assertSentOnce(t *testing.T, db *storetest.DB, srv *smtptest.Server, n int) {
	t.Helper()
	seen := map[string]int{}
	for _, m := range srv.Messages() {
		seen[strings.Join(m.To, ",")+" "+m.Header.Get("Subject")]++
	}
	for key, c := range seen {
		if c > 1 {
			t.Errorf("%q was accepted %d times", key, c)
		}
	}
	if len(seen) != 2*n {
		t.Errorf("%d distinct steps accepted, want %d", len(seen), 2*n)
	}
	if done := queryInt(t, db, `SELECT count(*) FROM enrollments WHERE status = 'completed'`); done != n {
		t.Errorf("%d of %d enrollments completed", done, n)
	}
}
