package bench

import (
	"fmt"
	"math"
	"slices"
)

// PairSummary is the ratio of a subject to its reference over runs taken
// as interleaved pairs (reference, subject, reference, subject, …). Each
// ratio is taken within its pair, so drift of a shared machine between
// pairs hits both figures alike; the median of the per-pair ratios is the
// figure, the min and max show the spread.
type PairSummary struct {
	Pairs  int       `json:"pairs"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Ratios []float64 `json:"ratios"`
}

// SummarizePairs takes subject[i] / reference[i] for each pair i, in run
// order, and their median, min and max.
func SummarizePairs(subject, reference []float64) (PairSummary, error) {
	if len(subject) != len(reference) {
		return PairSummary{}, fmt.Errorf("pairs: %d subject figures against %d reference figures; every pair needs both", len(subject), len(reference))
	}
	if len(subject) == 0 {
		return PairSummary{}, fmt.Errorf("pairs: no pairs to summarise")
	}
	s := PairSummary{Pairs: len(subject), Ratios: make([]float64, len(subject))}
	for i := range subject {
		if !(reference[i] > 0) || !(subject[i] >= 0) || math.IsInf(subject[i], 0) || math.IsInf(reference[i], 0) {
			return PairSummary{}, fmt.Errorf("pairs: pair %d has %v against %v; figures must be finite, the reference above 0", i+1, subject[i], reference[i])
		}
		s.Ratios[i] = subject[i] / reference[i]
	}
	sorted := slices.Sorted(slices.Values(s.Ratios))
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	if n := len(sorted); n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return s, nil
}
