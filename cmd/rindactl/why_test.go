package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWhyCommand(t *testing.T) {
	t.Parallel()
	env, _ := opsEnv(t)

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
	for _, tc := range []struct {
		args []string
		code int
	}{
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
