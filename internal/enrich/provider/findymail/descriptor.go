package findymail

import (
	"log/slog"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
)

// Descriptor is Findymail for the registry, the guard and providertest.
// Findymail documents only 300 simultaneous requests; 20/s stays far below.
// It bills found addresses only.
var Descriptor = providerspec.Descriptor{
	Name: Name,
	Role: providerspec.Finder,
	NewFinder: func(getenv func(string) string, log *slog.Logger) (enrich.Finder, error) {
		return FromEnv(getenv, log)
	},
	Limits:  providerspec.Limits{Rate: providerspec.Rate{Count: 20, Per: time.Second}, Burst: 20, CostUSD: 0.049},
	StandIn: standIn{},
}
