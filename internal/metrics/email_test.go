package metrics_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The collector reports the running totals as stored, zeros for a mailbox
// that never sent, and the paused gauge from the mailbox's state now.
func TestEmailReportsStoredTotals(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO workspaces (name) VALUES ('acme')`,
		`INSERT INTO mailboxes (workspace_id, address, smtp_url, paused_until)
		 SELECT id, 'sdr01@acme.test', 'smtp://127.0.0.1:1', now() + interval '1 hour' FROM workspaces`,
		`INSERT INTO mailboxes (workspace_id, address, smtp_url) SELECT id, 'sdr02@acme.test', 'smtp://127.0.0.1:1' FROM workspaces`,
		`INSERT INTO email_mailbox_totals (mailbox_id, sent, failed, deferred, delivery_unknown)
		 SELECT id, 120, 3, 7, 1 FROM mailboxes WHERE address = 'sdr01@acme.test'`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	em, err := metrics.LoadEmail(ctx, db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	want := `
# HELP rindactl_email_mailbox_paused 1 when the mailbox sends nothing now (paused by its provider's limit, or disabled), else 0.
# TYPE rindactl_email_mailbox_paused gauge
rindactl_email_mailbox_paused{mailbox="sdr01@acme.test",workspace="acme"} 1
rindactl_email_mailbox_paused{mailbox="sdr02@acme.test",workspace="acme"} 0
# HELP rindactl_email_messages_total Messages per mailbox since the mailbox was created, by outcome: sent (accepted by the server), failed (refused for good), deferred (refused for now, retried later), delivery_unknown (no answer after the final dot; never resent).
# TYPE rindactl_email_messages_total counter
rindactl_email_messages_total{mailbox="sdr01@acme.test",outcome="deferred",workspace="acme"} 7
rindactl_email_messages_total{mailbox="sdr01@acme.test",outcome="delivery_unknown",workspace="acme"} 1
rindactl_email_messages_total{mailbox="sdr01@acme.test",outcome="failed",workspace="acme"} 3
rindactl_email_messages_total{mailbox="sdr01@acme.test",outcome="sent",workspace="acme"} 120
rindactl_email_messages_total{mailbox="sdr02@acme.test",outcome="deferred",workspace="acme"} 0
rindactl_email_messages_total{mailbox="sdr02@acme.test",outcome="delivery_unknown",workspace="acme"} 0
rindactl_email_messages_total{mailbox="sdr02@acme.test",outcome="failed",workspace="acme"} 0
rindactl_email_messages_total{mailbox="sdr02@acme.test",outcome="sent",workspace="acme"} 0
`
	// A pedantic registry also checks the collector's consistency.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(em)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	enc := expfmt.NewEncoder(&got, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	if strings.TrimSpace(got.String()) != strings.TrimSpace(want) {
		t.Errorf("collected:\n%s\nwant:\n%s", got.String(), want)
	}
}
