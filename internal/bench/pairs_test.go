package bench

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestSummarizePairsTakesEachRatioWithinItsPair(t *testing.T) {
	t.Parallel()
	// The machine slows between pairs (reference 100, 40, 80). Within the
	// pairs the subject runs at 0.8, 0.9 and 0.7 of it: the median ratio is
	// 0.8, where the ratio of the medians (56 / 80) would say 0.7.
	s, err := SummarizePairs([]float64{80, 36, 56}, []float64{100, 40, 80})
	if err != nil {
		t.Fatal(err)
	}
	if s.Pairs != 3 || math.Abs(s.Median-0.8) > 1e-12 || math.Abs(s.Min-0.7) > 1e-12 || math.Abs(s.Max-0.9) > 1e-12 {
		t.Fatalf("summary %+v: want 3 pairs, median 0.8, min 0.7, max 0.9", s)
	}
}

func TestSummarizePairsMedianMinMax(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		sub, ref         []float64
		median, min, max float64
		ratios           []float64
	}{
		{"odd", []float64{3, 1, 10, 4, 1}, []float64{1, 1, 10, 2, 2}, 1, 0.5, 3, []float64{3, 1, 1, 2, 0.5}},
		{"even: mean of the middle two", []float64{1, 3, 2, 8}, []float64{1, 1, 1, 1}, 2.5, 1, 8, []float64{1, 3, 2, 8}},
		{"one pair", []float64{7}, []float64{2}, 3.5, 3.5, 3.5, []float64{3.5}},
	} {
		s, err := SummarizePairs(tc.sub, tc.ref)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.Median != tc.median || s.Min != tc.min || s.Max != tc.max || !slices.Equal(s.Ratios, tc.ratios) {
			t.Errorf("%s: got %+v; want median %v min %v max %v ratios %v (in run order)", tc.name, s, tc.median, tc.min, tc.max, tc.ratios)
		}
	}
}

func TestSummarizePairsRejectsUnpairedOrBadFigures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sub, ref []float64
		want     string
	}{
		{[]float64{1, 2}, []float64{1}, "every pair needs both"},
		{nil, nil, "no pairs"},
		{[]float64{1}, []float64{0}, "pair 1"},
		{[]float64{1, math.NaN()}, []float64{1, 1}, "pair 2"},
		{[]float64{math.Inf(1)}, []float64{1}, "pair 1"},
	} {
		if _, err := SummarizePairs(tc.sub, tc.ref); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v / %v: got %v, want an error naming %q", tc.sub, tc.ref, err, tc.want)
		}
	}
}
