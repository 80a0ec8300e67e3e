package main

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/stretchr/testify/require"
)

// reference is Jacobi iteration on a (size+2)×(size+2) array of rows
// whose outer ring is the boundary, written out plainly.
func reference(size int, tol float64, maxSteps int) ([]float64, int) {
	u := make([][]float64, size+2)
	for i := range u {
		u[i] = make([]float64, size+2)
	}
	for j := range u[0] {
		u[0][j] = 100
	}
	steps := 0
	for residual := math.Inf(1); steps < maxSteps && residual > tol; steps++ {
		next := make([][]float64, size+2)
		for i := range next {
			next[i] = append([]float64(nil), u[i]...)
		}
		residual = 0
		for i := 1; i <= size; i++ {
			for j := 1; j <= size; j++ {
				next[i][j] = (u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1]) / 4
				residual = math.Max(residual, math.Abs(next[i][j]-u[i][j]))
			}
		}
		u = next
	}
	var field []float64
	for i := 1; i <= size; i++ {
		field = append(field, u[i][1:size+1]...)
	}
	return field, steps
}

func TestJacobi(t *testing.T) {
	for _, tc := range []struct {
		ranks, size, maxSteps int
		tol                   float64
	}{
		{1, 10, 10000, 1e-3},
		{2, 10, 10000, 1e-3},
		{3, 11, 10000, 1e-3}, // 3×1: rows of 4, 4, 3
		{4, 13, 10000, 1e-3}, // 2×2: blocks 7 and 6 wide
		{4, 20, 50, 1e-9},    // stops at -steps
		{6, 17, 10000, 1e-2}, // 3×2
		{7, 9, 10000, 1e-3},  // 7×1
		{7, 7, 10000, 1e-3},  // a row each
	} {
		t.Run(fmt.Sprintf("%d_ranks_size_%d", tc.ranks, tc.size), func(t *testing.T) {
			want, wantSteps := reference(tc.size, tc.tol, tc.maxSteps)
			var got *result
			err := meshmpi.Run(tc.ranks, func(world *meshmpi.Comm) error {
				res, err := solve(world, tc.size, tc.tol, tc.maxSteps)
				if world.Rank() == 0 {
					got = res
				}
				return err
			}, meshmpi.WithTimeout(time.Minute))
			require.NoError(t, err)
			require.Equal(t, wantSteps, got.steps)
			require.Equal(t, want, got.field)
		})
	}
}

func TestTooSmallAPlate(t *testing.T) {
	err := meshmpi.Run(7, func(world *meshmpi.Comm) error {
		_, err := solve(world, 5, 1e-3, 100)
		return err
	}, meshmpi.WithTimeout(time.Minute))
	require.ErrorContains(t, err, "a 5×5 plate cannot be split 7×1")
}

// check, which decides the exit status, fails on a wrong answer.
func TestCheckFails(t *testing.T) {
	field, steps := reference(8, 1e-3, 1000)
	res := &result{field: field, steps: steps, dims: []int{1, 1}}
	require.NoError(t, check(1, 8, 1e-3, 1000, res))
	res.field[20] += 1e-9
	require.Error(t, check(1, 8, 1e-3, 1000, res))
	res.field[20] -= 1e-9
	res.steps++
	require.Error(t, check(1, 8, 1e-3, 1000, res))
}
