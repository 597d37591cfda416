package budget

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func TestCap(t *testing.T) {
	n := func(v int) *int { return &v }
	cases := []struct {
		budget   skyhookv1.InterruptionBudget
		selected int
		want     int
	}{
		{skyhookv1.InterruptionBudget{}, 15, 15},
		{skyhookv1.InterruptionBudget{Count: n(3)}, 15, 3},
		{skyhookv1.InterruptionBudget{Count: n(0)}, 15, 0},
		{skyhookv1.InterruptionBudget{Percent: n(33)}, 10, 3},
		{skyhookv1.InterruptionBudget{Percent: n(10)}, 5, 1},
		{skyhookv1.InterruptionBudget{Percent: n(0)}, 5, 0},
		{skyhookv1.InterruptionBudget{Percent: n(100)}, 7, 7},
	}
	for _, tc := range cases {
		if got := Cap(tc.budget, tc.selected); got != tc.want {
			t.Errorf("Cap(%+v, %d) = %d, want %d", tc.budget, tc.selected, got, tc.want)
		}
	}
}
