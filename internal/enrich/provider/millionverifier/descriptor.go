package millionverifier

import (
	"log/slog"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

// Descriptor is MillionVerifier for the registry, the guard and
// providertest. It documents no per-second limit for single checks; 50/s
// is a conservative default. It bills every verdict.
var Descriptor = providerspec.Descriptor{
	Name: Name,
	Role: providerspec.Verifier,
	NewVerifier: func(getenv func(string) string, log *slog.Logger) (enrich.Verifier, error) {
		return FromEnv(getenv, log)
	},
	Limits:  providerspec.Limits{Rate: providerspec.Rate{Count: 50, Per: time.Second}, Burst: 50, CostUSD: 0.0037, BillMisses: true},
	StandIn: standIn{},
}
