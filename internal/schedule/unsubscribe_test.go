package schedule

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Issue 25: schedule print emits the unsubscribe server: a socket and a
// service for systemd (socket activation: no --listen, the socket holds the
// address), a Deployment and a Service for Kubernetes; crontab cannot run a
// server and gets none.
func TestUnsubscribeUnits(t *testing.T) {
	t.Parallel()
	plan := Plan{Ticks: defaultTicks(t), Unsubscribe: "0.0.0.0:9090", User: "rindactl"}
	socket := renderOne(t, FormatSystemd, plan, "rindactl-unsubscribe.socket")
	service := renderOne(t, FormatSystemd, plan, "rindactl-unsubscribe.service")
	for _, want := range []string{"ListenStream=0.0.0.0:9090", "Accept=no", "WantedBy=sockets.target"} {
		if !strings.Contains(socket, "\n"+want+"\n") {
			t.Errorf("socket lacks %q:\n%s", want, socket)
		}
	}
	for _, want := range []string{"Requires=rindactl-unsubscribe.socket", "ExecStart=/usr/local/bin/rindactl unsubscribe serve --idle-exit=600s",
		"User=rindactl", "NoNewPrivileges=yes", "SystemCallFilter=@system-service", "TimeoutStopSec=15s"} {
		if !strings.Contains(service, "\n"+want+"\n") {
			t.Errorf("service lacks %q:\n%s", want, service)
		}
	}
	if strings.Contains(service, "--listen") {
		t.Errorf("a socket-activated service must not listen itself:\n%s", service)
	}

	k8s := renderOne(t, FormatKubernetes, plan, "rindactl-unsubscribe.yaml")
	dec := yaml.NewDecoder(strings.NewReader(k8s))
	var kinds []string
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			break
		}
		kinds = append(kinds, doc["kind"].(string))
	}
	if strings.Join(kinds, ",") != "Deployment,Service" {
		t.Errorf("kubernetes documents %v, want Deployment,Service", kinds)
	}
	for _, want := range []string{`"--listen=:9090"`, "containerPort: 9090", "path: /healthz", "targetPort: http", "readOnlyRootFilesystem: true"} {
		if !strings.Contains(k8s, want) {
			t.Errorf("kubernetes lacks %q:\n%s", want, k8s)
		}
	}

	files, err := Render(FormatCrontab, plan)
	if err != nil || len(files) != 1 || strings.Contains(files[0].Content, "unsubscribe") {
		t.Errorf("crontab: %v %v", files, err)
	}
	for _, bad := range []string{"8080", "localhost:http", "127.0.0.1:0", "127.0.0.1:70000", "bad host:80"} {
		if _, err := Render(FormatSystemd, Plan{Ticks: defaultTicks(t), Unsubscribe: bad}); err == nil || !strings.Contains(err.Error(), "unsubscribe listen address") {
			t.Errorf("listen %q: %v, want an error", bad, err)
		}
	}
}
