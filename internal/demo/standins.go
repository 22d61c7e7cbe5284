package demo

import (
	"fmt"
	"strings"

	"github.com/rindactl/rindactl/internal/enrich/provider/findymail"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// standIns are the outside world the ticks talk to, all in this process:
// the three providers (Findymail behind a meter), a Slack webhook and an
// SMTP server on loopback without TLS or auth.
type standIns struct {
	providers *providertest.Set
	findymail *meter
	slack     *slackHook
	smtp      *smtptest.Server
}

func startStandIns(findymailQuota int) (*standIns, error) {
	s := &standIns{providers: providertest.StartAll(), slack: newSlackHook()}
	// Findymail runs out of credits part-way: after findymailQuota answers
	// it gives its real quota answer (402 "Not enough credits") for good.
	s.providers.Findymail.QuotaAfter(findymailQuota)
	s.findymail = newMeter(s.providers.Findymail.URL())
	smtp, err := smtptest.Start(smtptest.Options{CountOnly: true})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("starting the demo's SMTP server: %w", err)
	}
	s.smtp = smtp
	return s, nil
}

// env points the ticks at the stand-ins. Rates are raised well above the
// real providers' documented limits: the stand-ins answer in microseconds
// and the demo replays hours in seconds.
func (s *standIns) env(providerRate string) map[string]string {
	env := s.providers.Env()
	env[providerhttp.BaseURLEnv(findymail.Name)] = s.findymail.URL()
	for _, srv := range s.providers.All() {
		env[rateEnv(srv.Provider())] = providerRate
	}
	env["RINDA_SLACK_WEBHOOK_URL"] = s.slack.URL()
	return env
}

// rateEnv is the guard's RINDA_<PROVIDER>_RATE.
func rateEnv(provider string) string { return "RINDA_" + strings.ToUpper(provider) + "_RATE" }

// Close stops every stand-in that started.
func (s *standIns) Close() {
	if s.smtp != nil {
		_ = s.smtp.Close()
	}
	if s.findymail != nil {
		s.findymail.Close()
	}
	s.slack.Close()
	s.providers.Close()
}
