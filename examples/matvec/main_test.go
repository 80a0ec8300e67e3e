package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/stretchr/testify/require"
)

// reference is the power iteration written out plainly, with the matrix
// as rows.
func reference(size, iters int) (float64, []float64) {
	a := make([][]float64, size)
	for i := range a {
		a[i] = make([]float64, size)
		for j := range a[i] {
			d := i - j
			if d < 0 {
				d = -d
			}
			a[i][j] = 1 / float64(1+d)
		}
	}
	x := make([]float64, size)
	for i := range x {
		x[i] = 1
	}
	var lambda float64
	for range iters {
		y := make([]float64, size)
		for i := range a {
			for j := range a[i] {
				y[i] += a[i][j] * x[j]
			}
		}
		lambda = 0
		for _, v := range y {
			if v < 0 {
				v = -v
			}
			if v > lambda {
				lambda = v
			}
		}
		for i := range y {
			x[i] = y[i] / lambda
		}
	}
	return lambda, x
}

func TestPowerIteration(t *testing.T) {
	for _, tc := range []struct{ ranks, size, iters int }{
		{1, 10, 5},
		{2, 10, 5},
		{3, 10, 20}, // 4+3+3 rows
		{4, 37, 20},
		{7, 100, 20},
		{7, 5, 3}, // more ranks than rows: two get none
	} {
		t.Run(fmt.Sprintf("%d_ranks_size_%d", tc.ranks, tc.size), func(t *testing.T) {
			wantLambda, wantX := reference(tc.size, tc.iters)
			err := meshmpi.Run(tc.ranks, func(world *meshmpi.Comm) error {
				lambda, x, err := powerIteration(world, tc.size, tc.iters)
				if err != nil {
					return err
				}
				if lambda != wantLambda {
					return fmt.Errorf("rank %d: λ = %v, want %v", world.Rank(), lambda, wantLambda)
				}
				for i := range x {
					if x[i] != wantX[i] {
						return fmt.Errorf("rank %d: x[%d] = %v, want %v", world.Rank(), i, x[i], wantX[i])
					}
				}
				return nil
			}, meshmpi.WithTimeout(time.Minute))
			require.NoError(t, err)
		})
	}
}

// check, which decides the exit status, fails on a wrong answer.
func TestCheckFails(t *testing.T) {
	lambda, x := reference(12, 4)
	require.NoError(t, check(1, 12, 4, lambda, x))
	x[3] += 1e-12
	require.Error(t, check(1, 12, 4, lambda, x))
}
