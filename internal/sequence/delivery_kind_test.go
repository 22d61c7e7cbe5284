package sequence

import "testing"

// The decision of ClassifyDelivery on its own: a reply (code, enhanced
// code, text, phase) to a kind, each rule and the order between them.
func TestReplyKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		r         reply
		untrusted bool
		want      DeliveryKind
	}{
		{"no reply", reply{phase: PhaseRcpt}, false, DeliveryTransient},
		{"no reply after the dot", reply{phase: PhaseDataEnd}, false, DeliveryUnknown},
		{"untrusted certificate", reply{phase: PhaseConnect}, true, DeliveryMailboxRefused},
		{"untrusted wins over the dot", reply{phase: PhaseDataEnd}, true, DeliveryMailboxRefused},
		{"recipient full, temporary", reply{code: 452, enhanced: "4.2.2"}, false, DeliveryTransient},
		{"recipient full, permanent", reply{code: 552, enhanced: "5.2.2"}, false, DeliveryRejected},
		{"recipient over quota beats the sender's quota words", reply{code: 552, text: "mailbox over quota"}, false, DeliveryRejected},
		{"sender quota by code", reply{code: 550, enhanced: "5.4.5"}, false, DeliveryMailboxQuota},
		{"sender quota, microsoft", reply{code: 554, enhanced: "5.2.0"}, false, DeliveryMailboxQuota},
		{"sender quota by words", reply{code: 550, text: "daily sending limit"}, false, DeliveryMailboxQuota},
		{"auth failed", reply{code: 535, phase: PhaseConnect}, false, DeliveryMailboxAuthFailed},
		{"auth failed by enhanced code", reply{code: 550, enhanced: "5.7.8"}, false, DeliveryMailboxAuthFailed},
		{"throttled, gmail", reply{code: 451, enhanced: "4.7.28"}, false, DeliveryMailboxThrottled},
		{"throttled, reputation 421", reply{code: 421, enhanced: "4.7.0"}, false, DeliveryMailboxThrottled},
		{"throttled by words", reply{code: 450, text: "too many messages"}, false, DeliveryMailboxThrottled},
		{"4.7.x is throttling", reply{code: 450, enhanced: "4.7.1"}, false, DeliveryMailboxThrottled},
		{"4.7.x greylisting is not", reply{code: 450, enhanced: "4.7.1", text: "greylisted"}, false, DeliveryTransient},
		{"session refused", reply{code: 554, phase: PhaseConnect}, false, DeliveryMailboxRefused},
		{"sender refused at MAIL", reply{code: 553, enhanced: "5.1.8", phase: PhaseMail}, false, DeliveryMailboxRefused},
		{"bounce by enhanced code", reply{code: 550, enhanced: "5.1.1", phase: PhaseRcpt}, false, DeliveryBounced},
		{"bounce without enhanced code at RCPT", reply{code: 550, phase: PhaseRcpt}, false, DeliveryBounced},
		{"550 without enhanced code after the dot", reply{code: 550, phase: PhaseDataEnd}, false, DeliveryRejected},
		{"policy rejection", reply{code: 550, enhanced: "5.7.1", text: "spam"}, false, DeliveryRejected},
		{"temporary failure", reply{code: 451, enhanced: "4.3.0"}, false, DeliveryTransient},
	} {
		if got := tc.r.kind(tc.untrusted); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
