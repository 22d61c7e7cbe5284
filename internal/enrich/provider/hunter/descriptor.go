package hunter

import (
	"log/slog"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

// Descriptor is Hunter for the registry, the guard and providertest.
// Hunter allows 15 requests/s and 500/min per key; 8/s with a burst of 7
// keeps both. It bills found addresses only.
var Descriptor = providerspec.Descriptor{
	Name: Name,
	Role: providerspec.Finder,
	NewFinder: func(getenv func(string) string, log *slog.Logger) (enrich.Finder, error) {
		return FromEnv(getenv, log)
	},
	Limits:  providerspec.Limits{Rate: providerspec.Rate{Count: 8, Per: time.Second}, Burst: 7, CostUSD: 0.0245},
	StandIn: standIn{},
}
