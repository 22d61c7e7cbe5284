package sequence

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// The incident's backlog: 30,339 due step-1 enrollments over 18 mailboxes,
// caps off, into the local SMTP server. Compare with BenchmarkBareGoMail.
const benchBacklog = 30339

func BenchmarkTick(b *testing.B) {
	for range b.N {
		b.StopTimer()
		f := newFixture(b, fixtureOptions{leads: benchBacklog, mailboxes: 18, countOnly: true})
		b.StartTimer()
		start := time.Now()
		rep := f.tick(TickOptions{Batch: 500, Concurrency: 18, MaxDuration: 10 * time.Minute})
		elapsed := time.Since(start)
		b.StopTimer()
		if rep.Sent != benchBacklog || f.srv.Accepted() != benchBacklog {
			b.Fatalf("sent %d (server %d), want %d", rep.Sent, f.srv.Accepted(), benchBacklog)
		}
		b.ReportMetric(float64(benchBacklog)/elapsed.Seconds(), "sends/s")
	}
}

// BenchmarkBareGoMail sends the same messages with a bare go-mail loop: one
// client per mailbox, 18 in parallel, no database. The clients speak the
// same dialogue as the Mailer (no NOOP or RSET per message): go-mail's
// defaults would add two round trips per message and flatter the tick.
func BenchmarkBareGoMail(b *testing.B) {
	for range b.N {
		b.StopTimer()
		srv := smtptest.New(b, smtptest.Options{CountOnly: true})
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 18)
		for m := range 18 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- bareSend(srv, m, 18)
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		if srv.Accepted() != benchBacklog {
			b.Fatalf("server accepted %d, want %d", srv.Accepted(), benchBacklog)
		}
		b.ReportMetric(float64(benchBacklog)/elapsed.Seconds(), "sends/s")
	}
}

func bareSend(srv *smtptest.Server, mailbox, mailboxes int) error {
	c, err := mail.NewClient(srv.Host(), mail.WithPort(srv.Port()), mail.WithTLSPolicy(mail.TLSOpportunistic),
		mail.WithTimeout(10*time.Second), mail.WithoutNoop(), mail.WithoutRset())
	if err != nil {
		return err
	}
	if err := c.DialWithContext(context.Background()); err != nil {
		return err
	}
	defer c.Close()
	from := fmt.Sprintf("sdr%02d@acme.test", mailbox+1)
	for i := mailbox; i < benchBacklog; i += mailboxes {
		m := mail.NewMsg()
		if err := m.From(from); err != nil {
			return err
		}
		if err := m.To(fmt.Sprintf("lead%d@example.test", i+1)); err != nil {
			return err
		}
		m.Subject(fmt.Sprintf("Hi First%d", i+1))
		m.SetMessageIDWithValue(NewMessageID(from))
		m.SetDate()
		m.SetBodyString(mail.TypeTextPlain, fmt.Sprintf("Hello First%d at Co%d", i+1, i+1))
		if err := c.Send(m); err != nil {
			return err
		}
	}
	return nil
}
