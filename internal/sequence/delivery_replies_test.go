package sequence

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// Real replies of the big providers and the common MTAs, each sent by a
// raw server with and without ENHANCEDSTATUSCODES, and read through both
// paths go-mail offers: the Mailer's own transaction (textproto replies,
// phase errors) and go-mail's Client.DialAndSend (SendError).
func TestClassifyRealProviderReplies(t *testing.T) {
	t.Parallel()
	greeting, auth, mailFrom, rcpt, dot := smtptest.Stage("greeting"), smtptest.StageAuth, smtptest.StageMail, smtptest.StageRcpt, smtptest.StageData
	cases := []struct {
		source string
		stage  smtptest.Stage
		reply  string
		want   DeliveryKind
	}{
		{"gmail", dot, "550 5.4.5 Daily user sending limit exceeded. For more information on Gmail sending limits go to https://support.google.com/a/answer/166852", DeliveryMailboxQuota},
		{"gmail", mailFrom, "550 5.4.5 Daily user sending quota exceeded. l2sm123 - gsmtp", DeliveryMailboxQuota},
		{"gmail", mailFrom, "421 4.7.0 Try again later, closing connection. (MAIL) x5sm1 - gsmtp", DeliveryMailboxThrottled},
		{"gmail", rcpt, "451 4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address.", DeliveryMailboxThrottled},
		{"gmail", rcpt, "550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address", DeliveryBounced},
		{"gmail", rcpt, "452 4.2.2 The email account that you tried to reach is over quota. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaTemp", DeliveryTransient},
		{"gmail", auth, "535 5.7.8 Username and Password not accepted. For more information, go to https://support.google.com/mail/?p=BadCredentials", DeliveryMailboxAuthFailed},
		{"microsoft 365", dot, "554 5.2.0 STOREDRV.Submission.Exception:SubmissionQuotaExceededException; Failed to process message due to a permanent exception", DeliveryMailboxQuota},
		{"microsoft 365", mailFrom, "451 4.7.500 Server busy. Please try again later from [203.0.113.7]. (S77714) [AM4PEPF00025F9C.eurprd.prod.outlook.com]", DeliveryMailboxThrottled},
		{"microsoft 365", rcpt, "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup", DeliveryBounced},
		{"microsoft 365", dot, "550 5.7.520 Access denied, Your organization does not allow external forwarding.", DeliveryRejected},
		{"microsoft 365", auth, "535 5.7.139 Authentication unsuccessful, SmtpClientAuthentication is disabled for the Tenant.", DeliveryMailboxAuthFailed},
		{"yahoo", mailFrom, "421 4.7.0 [TSS04] Messages from 203.0.113.7 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes", DeliveryMailboxThrottled},
		{"yahoo", dot, "554 5.7.9 Message not accepted for policy reasons.  See https://postmaster.yahooinc.com/error-codes", DeliveryRejected},
		{"yahoo", dot, "451 Message temporarily deferred - [160]", DeliveryTransient},
		{"postfix", rcpt, "550 5.1.1 <lead@x.test>: Recipient address rejected: User unknown in virtual mailbox table", DeliveryBounced},
		{"postfix", rcpt, "450 4.7.1 <lead@x.test>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/x.test.html", DeliveryTransient},
		{"postfix", mailFrom, "450 4.7.1 <sdr01@acme.test>: Sender address rejected: Rate limit reached, retry later", DeliveryMailboxThrottled},
		{"postfix", rcpt, "554 5.7.1 <lead@x.test>: Relay access denied", DeliveryRejected},
		{"postfix", mailFrom, "452 4.3.1 Insufficient system storage", DeliveryTransient},
		{"exim", greeting, "421 mail.example.com Too many concurrent SMTP connections from this IP address; please try again later.", DeliveryMailboxThrottled},
		{"exim", dot, "550 Domain acme.test has exceeded the max emails per hour (100/100 (100%)) allowed.  Message discarded.", DeliveryMailboxThrottled},
		{"exim", dot, "451 Temporary local problem - please try later", DeliveryTransient},
		{"exim", rcpt, "550 Unrouteable address", DeliveryBounced},
		{"amazon ses", dot, "454 Throttling failure: Maximum sending rate exceeded.", DeliveryMailboxThrottled},
		{"amazon ses", dot, "454 Throttling failure: Daily message quota exceeded.", DeliveryMailboxQuota},
		{"amazon ses", dot, "554 Message rejected: Email address is not verified. The following identities failed the check in region US-EAST-1: sdr01@acme.test", DeliveryRejected},
		{"amazon ses", auth, "535 Authentication Credentials Invalid", DeliveryMailboxAuthFailed},
		{"amazon ses", dot, "454 Temporary service failure", DeliveryTransient},
	}
	for _, tc := range cases {
		for _, enhanced := range []bool{true, false} {
			name := fmt.Sprintf("%s/%s/enhanced=%v/%s", tc.source, tc.stage, enhanced, tc.reply[:12])
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				opts := smtptest.RawOptions{Enhanced: enhanced, Replies: map[smtptest.Stage]string{tc.stage: tc.reply}}
				if tc.stage == greeting {
					opts = smtptest.RawOptions{Enhanced: enhanced, Greeting: tc.reply}
				}
				raw := smtptest.NewRaw(t, opts)
				for path, err := range map[string]error{"mailer": sendThroughMailer(t, raw), "go-mail": sendThroughGoMail(t, raw)} {
					de := ClassifyDelivery(err)
					if de == nil || de.Kind != tc.want {
						t.Errorf("%s: %v classified %+v, want %s", path, err, de, tc.want)
						continue
					}
					if want := tc.reply[:3]; fmt.Sprint(de.Code) != want {
						t.Errorf("%s: code %d, want %s", path, de.Code, want)
					}
					if code := enhancedCodePattern.FindString(tc.reply); de.Enhanced != code {
						t.Errorf("%s: enhanced %q, want %q from the text", path, de.Enhanced, code)
					}
				}
				if got := raw.Delivered(); len(got) != 0 {
					t.Errorf("a refused message counts as delivered: %d", len(got))
				}
			})
		}
	}
}

func rawMailbox(t *testing.T, raw *smtptest.Raw) Mailbox {
	t.Helper()
	ep, err := ParseSMTPURL(strings.Replace(raw.URL(), "smtp://", "smtp://sdr01@", 1))
	if err != nil {
		t.Fatal(err)
	}
	return Mailbox{Address: "sdr01@acme.test", SMTP: ep, PasswordEnv: "P"}
}

func sendThroughMailer(t *testing.T, raw *smtptest.Raw) error {
	t.Helper()
	mb := rawMailbox(t, raw)
	m := NewMailer(MailerOptions{Timeout: 5 * time.Second, LookupEnv: func(string) (string, bool) { return "pw", true }})
	defer m.Close()
	msg, err := testCampaign(t, "").Compose(0, Lead{FirstName: "L", Email: "lead@x.test"}, mb, NewMessageID(mb.Address), nil)
	if err != nil {
		t.Fatal(err)
	}
	return m.Send(context.Background(), mb, msg)
}

func sendThroughGoMail(t *testing.T, raw *smtptest.Raw) error {
	t.Helper()
	mb := rawMailbox(t, raw)
	c, err := mail.NewClient(mb.SMTP.Host, mail.WithPort(mb.SMTP.Port), mail.WithTLSPolicy(mail.NoTLS), mail.WithTimeout(5*time.Second),
		mail.WithSMTPAuth(mail.SMTPAuthPlain), mail.WithUsername("sdr01"), mail.WithPassword("pw"))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := buildMsg(&Message{From: mb.Address, To: "lead@x.test", Subject: "s", Body: "b", MessageID: NewMessageID(mb.Address)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c.DialAndSendWithContext(context.Background(), msg)
}
