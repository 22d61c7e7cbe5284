package enrich

import "github.com/rindactl/rindactl/internal/lead"

// Outcomes counts a tick's leads by the state it left them in. Every key is
// always present in JSON so scripts need not guess.
type Outcomes struct {
	Enriched         int `json:"enriched"`
	NotFound         int `json:"not_found"`
	Pending          int `json:"pending"`
	Unreachable      int `json:"unreachable"`
	EnrichmentFailed int `json:"enrichment_failed"`
}

func (o *Outcomes) add(status lead.Status) {
	switch status {
	case lead.Enriched:
		o.Enriched++
	case lead.NotFound:
		o.NotFound++
	case lead.Pending:
		o.Pending++
	case lead.Unreachable:
		o.Unreachable++
	case lead.EnrichmentFailed:
		o.EnrichmentFailed++
	}
}

// Map is the counts keyed by status, as stored in tick_runs.counts.
func (o Outcomes) Map() map[string]int {
	return map[string]int{
		string(lead.Enriched): o.Enriched, string(lead.NotFound): o.NotFound, string(lead.Pending): o.Pending,
		string(lead.Unreachable): o.Unreachable, string(lead.EnrichmentFailed): o.EnrichmentFailed,
	}
}

// Report is what one tick did; `enrich tick --output json` prints it.
type Report struct {
	TickID   string   `json:"tick_id"`
	Claimed  int      `json:"claimed"`
	Outcomes Outcomes `json:"outcomes"`
	// ProviderCalls counts requests made per provider (finders and the
	// verifier); every configured provider has a key.
	ProviderCalls map[string]int `json:"provider_calls"`
	DurationMS    int64          `json:"duration_ms"`
	// RateWaitMS sums the time calls waited for their providers' rate
	// slots: a tick working at its buckets' pace spends most of its
	// duration here, times the concurrency.
	RateWaitMS int64 `json:"rate_wait_ms"`
	// Lost counts outcomes not written because another tick took the lease
	// over (this tick ran past its lease).
	Lost int `json:"-"`
}
