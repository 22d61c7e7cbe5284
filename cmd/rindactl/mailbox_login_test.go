package main

import (
	"strings"
	"testing"
)

// Issue 38: `mailbox test` logs in without sending: a good password is
// exit 0, a wrong one exit 1 naming AUTH, without the password; a missing
// variable names it; an unknown address is exit 2. Nothing is sent.
func TestMailboxTestLogsInWithoutSending(t *testing.T) {
	t.Parallel()
	_, srv, env := emailCampaignSetup(t)
	if res := runCLI(t, env, "mailbox", "test", "sdr01@acme.test"); res.code != 0 || !strings.Contains(res.stdout, "smtp ok") {
		t.Fatalf("good mailbox = %+v", res)
	}
	env["RINDA_SMTP_PASSWORD_SDR01"] = "wrong-s3cret-pw"
	res := runCLI(t, env, "mailbox", "test", "sdr01@acme.test")
	if res.code != 1 || !strings.Contains(res.stderr, "smtp failed") || !strings.Contains(res.stderr, ": AUTH: ") || strings.Contains(res.stderr+res.stdout, "wrong-s3cret-pw") {
		t.Fatalf("wrong password = %+v", res)
	}
	delete(env, "RINDA_SMTP_PASSWORD_SDR01")
	if res := runCLI(t, env, "mailbox", "test", "sdr01@acme.test"); res.code != 1 || !strings.Contains(res.stderr, "password: ") || !strings.Contains(res.stderr, "RINDA_SMTP_PASSWORD_SDR01") {
		t.Fatalf("missing variable = %+v", res)
	}
	if res := runCLI(t, env, "mailbox", "test", "nobody@acme.test"); res.code != 2 || !strings.Contains(res.stderr, `"nobody@acme.test"`) || !strings.Contains(res.stderr, "rindactl mailbox list") || lines(res.stderr) != 1 {
		t.Fatalf("unknown address = %+v", res)
	}
	if srv.Received() != 0 {
		t.Fatalf("mailbox test sent %d messages, want 0", srv.Received())
	}
}
