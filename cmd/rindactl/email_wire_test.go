package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// Issue 25, finding 4, as reported: a server answering the final dot with
// a 100 MB multi-line 550, `email tick --max-duration 3s`, SIGTERM at 1 s.
// Before: 64 s, SIGTERM ignored for 33 s, 1.27 GB resident, the whole text
// stored. Bound by what must never happen: the process holding the flood
// (its peak RSS, the server's count of what it got out), a stored text
// past 2 KiB, the tick outliving the signal by far.
func TestEmailTickAgainstAHundredMegabyteReply(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	raw := smtptest.NewRaw(t, smtptest.RawOptions{Flood: &smtptest.Flood{
		Stage: smtptest.StageData, Bytes: 100 << 20, Last: "550 5.1.1 end",
		Line: "550-5.1.1 The email account that you tried to reach does not exist. " + strings.Repeat("x", 40),
	}})
	campaign := filepath.Join(t.TempDir(), "campaign.yaml")
	os.WriteFile(campaign, []byte(fmt.Sprintf("workspace: acme\nname: q4\nmailboxes:\n  - address: sdr01@acme.test\n    smtp_url: %s\n"+
		"steps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"Hello\"\n", raw.URL())), 0o600)
	env := map[string]string{"DATABASE_URL": db.URL}
	if res := runCLI(t, env, "import", "campaign", campaign); res.code != exitOK {
		t.Fatalf("import campaign: %+v", res)
	}
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, 3) g`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != exitOK {
		t.Fatalf("enroll: %+v", res)
	}

	// The report's --max-duration 3s, lengthened: on CI's loaded cores the
	// tick's start-up alone has taken 3 s, and it then ended before its first
	// message. The SIGTERM below is what must end it.
	cmd, stdout, stderr := startRindactl(t, map[string]string{"DATABASE_URL": db.TickURL()}, "email", "tick", "--max-duration", "30s", "--output", "json")
	// At 1 s, and not before the first message's dot reached the server:
	// a signal during the tick's start-up is another matter.
	time.Sleep(time.Second)
	testkit.Eventually(t, "the first message at the server", func() bool { return len(raw.Received()) > 0 })
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitOK {
		t.Fatalf("exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	if took := time.Since(signalled); took > 20*time.Second {
		t.Errorf("the tick exited %s after SIGTERM", took)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 400<<10 {
		t.Errorf("peak RSS %d MiB: the tick held the reply", ru.Maxrss>>10)
	}
	var longest int
	if err := db.Pool.QueryRow(context.Background(), `SELECT greatest(
		(SELECT coalesce(max(octet_length(error)), 0) FROM sends),
		(SELECT coalesce(max(octet_length(last_error)), 0) FROM enrollments))`).Scan(&longest); err != nil {
		t.Fatal(err)
	}
	if longest > 2048 || stderr.Len() > 64<<10 {
		t.Errorf("stored error text up to %d bytes, %d bytes on stderr: want at most 2 KiB per text", longest, stderr.Len())
	}
	raw.Close()
	if w := raw.Written(); w > 32<<20 {
		t.Errorf("the server got %d bytes out: the tick read the flood", w)
	}
	if !strings.Contains(stdout.String(), `"bounced"`) {
		t.Errorf("report %s: want the leads bounced on the cut 550 5.1.1", stdout)
	}
}
