package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func writeCampaign(t *testing.T, srv *smtptest.Server, extra string) string {
	t.Helper()
	doc := fmt.Sprintf(`workspace: acme
name: q4
mailboxes:
  - address: sdr01@acme.test
    smtp_url: %s
    password_env: RINDA_SMTP_PASSWORD_SDR01
  - address: sdr02@acme.test
    smtp_url: %s
    password_env: RINDA_SMTP_PASSWORD_SDR02
steps:
  - subject: "Hi {{.FirstName}}"
    body: "Hello"
  - delay: 72h
    body: "Following up"
%s`, srv.URL("sdr01"), srv.URL("sdr02"), extra)
	path := filepath.Join(t.TempDir(), "campaign.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestImportEnrollEmailTick(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "pw1-s3cret", "sdr02": "pw2-s3cret"}})
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_SMTP_PASSWORD_SDR01": "pw1-s3cret", "RINDA_SMTP_PASSWORD_SDR02": "pw2-s3cret"}
	file := writeCampaign(t, srv, "")

	res := runCLI(t, env, "import", "campaign", file)
	if res.code != 0 || !strings.Contains(res.stdout, "created campaign acme/q4: 2 mailboxes, 2 steps") {
		t.Fatalf("import = %+v", res)
	}
	if res := runCLI(t, env, "import", "campaign", file, "-o", "json"); res.code != 0 || !strings.Contains(res.stdout, `"created": false`) {
		t.Fatalf("re-import = %+v", res)
	}
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, 6) g`); err != nil {
		t.Fatal(err)
	}
	leads := filepath.Join(t.TempDir(), "leads.txt")
	os.WriteFile(leads, []byte("# vip\next-1\nLEAD2@example.test\n\n"), 0o600)
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--leads", leads); res.code != 0 || !strings.Contains(res.stdout, "enrolled 2 leads") {
		t.Fatalf("enroll --leads = %+v", res)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != 0 || !strings.Contains(res.stdout, "enrolled 4 leads") {
		t.Fatalf("enroll --all-leads = %+v", res)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != 0 || !strings.Contains(res.stdout, "enrolled 0 leads") {
		t.Fatalf("second enroll = %+v", res)
	}

	res = runCLI(t, env, "email", "tick", "--output", "json")
	if res.code != 0 {
		t.Fatalf("email tick = %+v", res)
	}
	var rep struct {
		Claimed    int            `json:"claimed"`
		Sent       int            `json:"sent"`
		Outcomes   map[string]int `json:"outcomes"`
		ByMailbox  map[string]int `json:"by_mailbox"`
		DurationMS *int64         `json:"duration_ms"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("tick JSON %q: %v", res.stdout, err)
	}
	if rep.Claimed != 6 || rep.Sent != 6 || rep.Outcomes["sent"] != 6 || rep.DurationMS == nil ||
		rep.ByMailbox["sdr01@acme.test"]+rep.ByMailbox["sdr02@acme.test"] != 6 || rep.ByMailbox["sdr01@acme.test"] == 0 || rep.ByMailbox["sdr02@acme.test"] == 0 {
		t.Errorf("tick report = %+v", rep)
	}
	if srv.Accepted() != 6 {
		t.Errorf("server accepted %d, want 6", srv.Accepted())
	}
	if strings.Contains(res.stdout+res.stderr, "s3cret") {
		t.Error("the SMTP password was printed")
	}
}

func TestImportCampaignRejectsWithFieldPath(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{})
	file := writeCampaign(t, srv, "  - delay: 3x\n    body: late\n")
	res := runCLI(t, map[string]string{"DATABASE_URL": db.URL}, "import", "campaign", file)
	if res.code != exitUsage || !strings.Contains(res.stderr, `steps[2].delay: invalid duration "3x"`) {
		t.Fatalf("import = %+v", res)
	}
	var n int
	db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM campaigns`).Scan(&n)
	if n != 0 {
		t.Errorf("%d campaigns written after a rejected import", n)
	}
	if res := runCLI(t, nil, "enroll", "--workspace", "acme", "--campaign", "q4"); res.code != exitUsage || !strings.Contains(res.stderr, "--all-leads or --leads") {
		t.Errorf("enroll without a lead selection = %+v", res)
	}
}

// emailCampaignSetup is a database with the campaign of writeCampaign
// imported, its two mailboxes on an SMTP server that checks their passwords.
func emailCampaignSetup(t *testing.T) (*storetest.DB, *smtptest.Server, map[string]string) {
	t.Helper()
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "pw1", "sdr02": "pw2"}})
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_SMTP_PASSWORD_SDR01": "pw1", "RINDA_SMTP_PASSWORD_SDR02": "pw2", "USER": "oncall"}
	if res := runCLI(t, env, "import", "campaign", writeCampaign(t, srv, "")); res.code != 0 {
		t.Fatalf("import campaign = %+v", res)
	}
	return db, srv, env
}

// The same CSV imported twice (no external_id), with addresses that differ
// only in case and spaces: whatever the import makes of it, enroll
// --all-leads and an email tick mail each address once.
func TestDuplicateLeadsGetOneEmailPerAddress(t *testing.T) {
	t.Parallel()
	_, srv, env := emailCampaignSetup(t)
	csv := filepath.Join(t.TempDir(), "leads.csv")
	os.WriteFile(csv, []byte("first_name,last_name,company_domain,email\n"+
		"Ana,Lee,globex.test,ana@globex.test\n"+
		"Ana,Lee,globex.test,ANA@Globex.test\n"+
		"Bo,Kim,initech.test,bo@initech.test\n"+
		"Cy,Park,umbrella.test,cy@umbrella.test\n"), 0o600)
	for range 2 {
		if res := runCLI(t, env, "import", "leads", "--workspace", "acme", csv); res.code != 0 {
			t.Fatalf("import leads = %+v", res)
		}
	}
	res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads")
	if res.code != 0 || !strings.Contains(res.stdout, "enrolled 3 leads") {
		t.Fatalf("enroll = %+v, want 3 leads enrolled (one per address)", res)
	}
	if res := runCLI(t, env, "email", "tick"); res.code != 0 {
		t.Fatalf("email tick = %+v", res)
	}
	perAddress := map[string]int{}
	for _, m := range srv.Messages() {
		perAddress[strings.ToLower(m.To[0])]++
	}
	if len(perAddress) != 3 || perAddress["ana@globex.test"] != 1 || perAddress["bo@initech.test"] != 1 || perAddress["cy@umbrella.test"] != 1 {
		t.Errorf("messages per address = %v, want one each for 3 addresses", perAddress)
	}
}

// emailTotals reads rindactl_email_messages_total from a textfile, summed
// over mailboxes per outcome, and the paused gauge per mailbox.
func emailTotals(t *testing.T, path string) (map[string]float64, map[string]float64) {
	t.Helper()
	families := readMetricsFile(t, path)
	totals, paused := map[string]float64{}, map[string]float64{}
	label := func(m *dto.Metric, name string) string {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	for _, m := range families["rindactl_email_messages_total"].GetMetric() {
		totals[label(m, "outcome")] += m.GetCounter().GetValue()
	}
	for _, m := range families["rindactl_email_mailbox_paused"].GetMetric() {
		paused[label(m, "mailbox")] = m.GetGauge().GetValue()
	}
	return totals, paused
}

// Email counters in the textfile are running totals kept in Postgres, so
// they grow across ticks; the paused gauge follows the mailbox; promtool
// accepts the file.
func TestEmailTickMetricsAreCumulative(t *testing.T) {
	t.Parallel()
	db, srv, env := emailCampaignSetup(t)
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, 6) g`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != 0 {
		t.Fatalf("enroll = %+v", res)
	}
	srv.Script(smtptest.Rule{Stage: smtptest.StageData, To: "lead1@example.test", AfterDot: true, Close: true, Times: 1})
	prom := filepath.Join(t.TempDir(), "rindactl_email.prom")

	if res := runCLI(t, env, "email", "tick", "--metrics-file", prom); res.code != 0 {
		t.Fatalf("email tick = %+v", res)
	}
	first, paused := emailTotals(t, prom)
	if first["sent"] != float64(srv.Accepted()) || first["delivery_unknown"] != 1 {
		t.Fatalf("after one tick: totals %v, server accepted %d; want sent = accepted and 1 delivery_unknown", first, srv.Accepted())
	}
	if len(paused) != 2 || paused["sdr01@acme.test"] != 0 || paused["sdr02@acme.test"] != 0 {
		t.Errorf("paused gauges = %v, want both mailboxes at 0", paused)
	}

	// Time passes; a second tick sends the rest and the follow-ups, and one
	// mailbox gets paused by an operator-visible limit.
	if _, err := db.Pool.Exec(context.Background(), `UPDATE enrollments SET next_send_at = now() - interval '1 second' WHERE status = 'active'`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "email", "tick", "--metrics-file", prom); res.code != 0 {
		t.Fatalf("second email tick = %+v", res)
	}
	if _, err := db.Pool.Exec(context.Background(), `UPDATE mailboxes SET paused_until = now() + interval '1 hour' WHERE address = 'sdr01@acme.test'`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "email", "tick", "--metrics-file", prom); res.code != 0 {
		t.Fatalf("third email tick = %+v", res)
	}
	second, paused := emailTotals(t, prom)
	if second["sent"] != float64(srv.Accepted()) || second["sent"] <= first["sent"] || second["delivery_unknown"] != 1 {
		t.Errorf("after three ticks: totals %v (first %v), server accepted %d; want cumulative totals", second, first, srv.Accepted())
	}
	if paused["sdr01@acme.test"] != 1 || paused["sdr02@acme.test"] != 0 {
		t.Errorf("paused gauges = %v, want sdr01 paused", paused)
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian: apt-get install prometheus); the textfile was checked with the Go parser only")
	}
	data, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(data))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s\n--- file ---\n%s", err, out, data)
	}
}

// A step whose final dot got no answer: visible in status, why and events,
// never resent by a tick, sent again only after requeue.
func TestDeliveryUnknownIsShownAndOnlyRequeueResends(t *testing.T) {
	t.Parallel()
	db, srv, env := emailCampaignSetup(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, 3) g`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != 0 {
		t.Fatalf("enroll = %+v", res)
	}
	srv.Script(smtptest.Rule{Stage: smtptest.StageData, To: "lead1@example.test", AfterDot: true, Close: true, Times: 1})
	if res := runCLI(t, env, "email", "tick"); res.code != 0 || !strings.Contains(res.stdout, "delivery_unknown=1") {
		t.Fatalf("email tick = %+v, want delivery_unknown=1 in the outcomes", res)
	}
	toLead1 := func() int {
		n := 0
		for _, m := range srv.Messages() {
			if m.To[0] == "lead1@example.test" {
				n++
			}
		}
		return n
	}

	var status struct {
		Email struct {
			DeliveryUnknown int64 `json:"delivery_unknown"`
			Campaigns       []struct {
				Name            string `json:"name"`
				DeliveryUnknown int64  `json:"delivery_unknown"`
			} `json:"campaigns"`
		} `json:"email"`
	}
	res := runCLI(t, env, "status", "--output", "json")
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &status) != nil || status.Email.DeliveryUnknown != 1 ||
		len(status.Email.Campaigns) != 1 || status.Email.Campaigns[0].DeliveryUnknown != 1 {
		t.Errorf("status --output json = %+v\n%s", status, res.stdout)
	}
	if res := runCLI(t, env, "status"); res.code != 0 || !strings.Contains(res.stdout, "delivery unknown 1") {
		t.Errorf("status table does not show it:\n%s", res.stdout)
	}
	var id int64
	if err := db.Pool.QueryRow(ctx, `SELECT e.id FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = 'lead1@example.test'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "why", "enrollment", fmt.Sprint(id)); res.code != 0 || !strings.Contains(res.stdout, "requeue --status=delivery_unknown") {
		t.Errorf("why enrollment = %+v", res)
	}
	if res := runCLI(t, env, "events", "list"); res.code != 0 || !strings.Contains(res.stdout, "delivery_unknown") {
		t.Errorf("events list = %+v", res)
	}

	// Time passes: no tick sends it again.
	if _, err := db.Pool.Exec(ctx, `UPDATE enrollments SET next_send_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "email", "tick"); res.code != 0 || toLead1() != 1 {
		t.Fatalf("second tick = %+v; lead1 has %d messages, want 1", res, toLead1())
	}
	// The operator checked the Sent folder and decides to resend.
	res = runCLI(t, env, "requeue", "--status=delivery_unknown", "--campaign=q4", "--yes")
	if res.code != 0 || !strings.Contains(res.stdout, "Requeued 1 enrollment(s)") {
		t.Fatalf("requeue = %+v", res)
	}
	if res := runCLI(t, env, "email", "tick"); res.code != 0 || toLead1() != 2 {
		t.Fatalf("tick after requeue = %+v; lead1 has %d messages, want 2", res, toLead1())
	}
	var st string
	if err := db.Pool.QueryRow(ctx, `SELECT e.status || '/' || s.status FROM enrollments e JOIN sends s ON s.enrollment_id = e.id AND s.step = 1 WHERE e.id = $1`, id).Scan(&st); err != nil || st != "active/sent" {
		t.Errorf("after requeue and tick: %q %v, want active/sent", st, err)
	}
}

// The case: a server replying one byte every 4 s kept a
// --max-duration 5s tick running 63 s. The whole command now ends within
// --max-duration + 2 s, and the healthy mailbox sends its leads.
func TestEmailTickEndsOnTimeBesideATricklingServer(t *testing.T) {
	t.Parallel()
	db, srv, env := emailCampaignSetup(t)
	raw := smtptest.NewRaw(t, smtptest.RawOptions{ByteDelay: 4 * time.Second})
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `UPDATE mailboxes SET smtp_url = $1 WHERE address = 'sdr01@acme.test'`, strings.Replace(raw.URL(), "smtp://", "smtp://sdr01@", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, 20) g`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != 0 {
		t.Fatalf("enroll = %+v", res)
	}
	var healthy int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM enrollments e JOIN mailboxes m ON m.id = e.mailbox_id WHERE m.address = 'sdr02@acme.test'`).Scan(&healthy); err != nil {
		t.Fatal(err)
	}
	// The 5s: at 3s a loaded machine's start-up left the healthy
	// mailbox too little of it for its 10 or so sends.
	start := time.Now()
	res := runCLI(t, env, "email", "tick", "--max-duration", "5s")
	took := time.Since(start)
	t.Logf("email tick --max-duration 5s beside a trickling server took %s", took)
	// Bounded by what must never happen, not by a load-dependent margin
	// over 5 s: waiting for the trickling server (its greeting alone takes
	// about 90 s; the mailer gives a greeting 15 s).
	if took >= sequence.MailerGreetingTimeoutDefault {
		t.Errorf("email tick --max-duration 5s took %s: it waited for the trickling server", took)
	}
	if res.code != 0 {
		t.Errorf("tick = %+v", res)
	}
	// The healthy mailbox sends its leads. On CI's loaded cores a 5 s
	// tick has ended with some still claimed (released at the deadline);
	// each later tick sends more of them, never none, and nothing twice.
	for range healthy {
		before := srv.Accepted()
		if before == healthy {
			break
		}
		if res := runCLI(t, env, "email", "tick", "--max-duration", "5s"); res.code != 0 || srv.Accepted() == before {
			t.Fatalf("a later tick = %+v; healthy mailbox delivered %d of its %d, none in this tick", res, srv.Accepted(), healthy)
		}
	}
	if srv.Accepted() != healthy {
		t.Errorf("tick = %+v; healthy mailbox delivered %d of its %d", res, srv.Accepted(), healthy)
	}
}

// A lease that could end while a message is still on the wire (deadline
// plus the SMTP grace) would let another tick call a delivered step
// unknown: refused as a usage error naming the fix.
func TestEmailTickLeaseMustCoverTheSMTPGrace(t *testing.T) {
	t.Parallel()
	res := runCLI(t, nil, "email", "tick", "--max-duration", "2s", "--lease", "2500ms")
	if res.code != exitUsage || !strings.Contains(res.stderr, "--lease 2.5s must exceed --max-duration 2s plus the 1s SMTP grace: use --lease 4s or more") {
		t.Errorf("email tick with a short lease = %+v", res)
	}
}

// Issue 27: RINDA_SMTP_HELO names the greeting of every mailbox without
// its own; a bare label (what servers refuse) is a configuration error.
func TestEmailTickRefusesABareGreetingName(t *testing.T) {
	t.Parallel()
	res := runCLI(t, map[string]string{"RINDA_SMTP_HELO": "vm"}, "email", "tick")
	if res.code != exitUsage || !strings.Contains(res.stderr, `RINDA_SMTP_HELO="vm" is not a fully qualified host name`) {
		t.Errorf("email tick with RINDA_SMTP_HELO=vm = %+v", res)
	}
}
