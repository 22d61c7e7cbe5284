package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestWhyCommand(t *testing.T) {
	t.Parallel()
	env, db := opsEnv(t)

	res := runCLI(t, env, "why", "lead", "crm-7")
	if res.code != 0 || !strings.Contains(res.stdout, "negative_cache") || !strings.Contains(res.stdout, "findymail breaker open until") {
		t.Errorf("why lead: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, env, "why", "enrollment", "1", "--output", "json")
	var x struct {
		Status string
		Holds  []struct{ Code string }
	}
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &x) != nil || x.Status != "failed" || len(x.Holds) == 0 || x.Holds[0].Code != "failed" {
		t.Errorf("why enrollment: exit %d %+v\n%s%s", res.code, x, res.stdout, res.stderr)
	}
	// A mailbox: its pause, its bounce rate, how far its inbox was read and
	// what was skipped.
	if _, err := db.Pool.Exec(context.Background(), `UPDATE mailboxes SET imap_url = 'imaps://imap.acme.test',
			paused_until = now() + interval '1 hour', pause_reason = 'bounce rate 4.0%: 8 of the last 200 sends hard-bounced (limit 3.0% of 200)';
		INSERT INTO inbox_checkpoints (mailbox_id, uid_validity, last_uid, checked_at) VALUES (1, 7, 42, now());
		INSERT INTO inbox_skipped (mailbox_id, uid_validity, uid, reason, tick_id) VALUES (1, 7, 41, 'message cannot be processed: x', 't1');
		INSERT INTO inbox_unmatched (mailbox_id, uid_validity, uid, reason, tick_id) VALUES (1, 7, 40, 'a delivery report from attacker@evil.test naming 1 address(es) proves none of them ours', 't1')`); err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, env, "why", "mailbox", "A@acme.test")
	for _, want := range []string{"mailbox a@acme.test in workspace acme", "read up to UID 42 (UIDVALIDITY 7)", "mailbox_paused", "bounce rate 4.0%", "inbox_skipped", "message UID 41",
		"unmatched  1 delivery report(s) proved nothing of ours", "UID 40 (UIDVALIDITY 7)", "attacker@evil.test"} {
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("why mailbox: exit %d, want %q in\n%s%s", res.code, want, res.stdout, res.stderr)
		}
	}
	var mb struct {
		Inbox struct {
			LastUID uint32 `json:"last_uid"`
			Skipped []struct {
				UID    uint32
				Reason string
			}
			Unmatched []struct {
				UID uint32
			}
			UnmatchedTotal int64 `json:"unmatched_total"`
		}
	}
	res = runCLI(t, env, "why", "mailbox", "a@acme.test", "--output", "json")
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &mb) != nil || mb.Inbox.LastUID != 42 || len(mb.Inbox.Skipped) != 1 || mb.Inbox.Skipped[0].UID != 41 ||
		len(mb.Inbox.Unmatched) != 1 || mb.Inbox.Unmatched[0].UID != 40 || mb.Inbox.UnmatchedTotal != 1 {
		t.Errorf("why mailbox --output json: exit %d %+v\n%s%s", res.code, mb, res.stdout, res.stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"why", "mailbox", "nobody@acme.test"}, exitUsage},
		{[]string{"why", "lead", "crm-999"}, exitUsage},
		{[]string{"why", "enrollment", "999"}, exitUsage},
		{[]string{"why", "enrollment", "abc"}, exitUsage},
		{[]string{"why", "lead"}, exitUsage},
	} {
		if res := runCLI(t, env, tc.args...); res.code != tc.code || res.stderr == "" {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, res.code, tc.code, res.stderr)
		}
	}
}
