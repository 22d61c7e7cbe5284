package providerhttp

import (
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
)

// Issue 24: the adapter's line says what the provider answered (a 402 is
// "quota exhausted", not "call blocked"), for every kind of error.
func TestAnswerMessageForEveryKind(t *testing.T) {
	t.Parallel()
	for _, k := range []enrich.ErrorKind{enrich.KindQuota, enrich.KindRateLimited, enrich.KindAuth, enrich.KindInvalidLead, enrich.KindUnavailable, enrich.KindCancelled} {
		if answerMessage[k] == "" {
			t.Errorf("no adapter log line for %s", k)
		}
	}
}
