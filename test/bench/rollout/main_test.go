package main

import (
	"math"
	"testing"
)

// quantile interpolates within a bucket as Prometheus' histogram_quantile
// does.
func TestHistogramQuantile(t *testing.T) {
	inf := math.Inf(1)
	h := histogram{bounds: []float64{0.005, 0.01, 0.025, inf}, counts: []float64{50, 90, 100, 100}}
	for q, want := range map[float64]float64{
		0.5:  0.005,                       // the rank (50) is the first bucket's top
		0.25: 0.0025,                      // half-way into the first bucket, from 0
		0.7:  0.005 + 0.005*(70-50)/40,    // within the second
		0.99: 0.01 + 0.015*(99-90)/(10.0), // within the third
	} {
		if got := h.quantile(q); math.Abs(got-want) > 1e-12 {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
	tail := histogram{bounds: []float64{0.005, 0.01, inf}, counts: []float64{1, 2, 10}}
	if got := tail.quantile(0.99); got != 0.01 {
		t.Errorf("in the +Inf bucket: %v, want the largest finite bound 0.01", got)
	}
	before := histogram{bounds: h.bounds, counts: []float64{40, 80, 90, 90}}
	if d := h.minus(before); d.count() != 10 || d.quantile(0.5) != 0.0025 {
		t.Errorf("delta = %+v", d)
	}
	if !math.IsNaN((histogram{}).quantile(0.5)) {
		t.Error("an empty histogram has a quantile")
	}
}
