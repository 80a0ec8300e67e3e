package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/stretchr/testify/require"
)

// reference is Lloyd's algorithm on all the points, written out plainly:
// it stops when an iteration moves no point to another cluster.
func reference(n, k, maxIters int) *result {
	pts := make([][2]int64, n)
	for i := range pts {
		pts[i] = point(i, k)
	}
	cen := make([][2]float64, k)
	for c := range cen {
		cen[c] = [2]float64{float64(pts[c][0]), float64(pts[c][1])}
	}
	label := make([]int, n)
	for i := range label {
		label[i] = -1
	}
	var counts []int64
	iters := 0
	for iters < maxIters {
		sums := make([][2]int64, k)
		counts = make([]int64, k)
		moved := false
		for i, pt := range pts {
			best := 0
			for c := 1; c < k; c++ {
				if dist(pt, cen[c]) < dist(pt, cen[best]) {
					best = c
				}
			}
			if best != label[i] {
				label[i], moved = best, true
			}
			sums[best][0] += pt[0]
			sums[best][1] += pt[1]
			counts[best]++
		}
		iters++
		if !moved {
			break
		}
		for c := range cen {
			if counts[c] > 0 {
				cen[c] = [2]float64{float64(sums[c][0]) / float64(counts[c]), float64(sums[c][1]) / float64(counts[c])}
			}
		}
	}
	return &result{centroids: cen, counts: counts, iters: iters}
}

func dist(pt [2]int64, c [2]float64) float64 {
	dx, dy := float64(pt[0])-c[0], float64(pt[1])-c[1]
	return float64(dx*dx) + float64(dy*dy)
}

func TestKmeans(t *testing.T) {
	for _, tc := range []struct{ ranks, n, k, maxIters int }{
		{1, 1000, 4, 100},
		{2, 1001, 4, 100},
		{3, 2000, 5, 100},
		{4, 999, 3, 100},
		{4, 5000, 7, 3}, // stops at -iters
		{7, 3000, 5, 100},
		{7, 5, 3, 100}, // fewer points than ranks
		{7, 1, 1, 100},
	} {
		t.Run(fmt.Sprintf("%d_ranks_%d_points_k%d", tc.ranks, tc.n, tc.k), func(t *testing.T) {
			want := reference(tc.n, tc.k, tc.maxIters)
			err := meshmpi.Run(tc.ranks, func(world *meshmpi.Comm) error {
				got, err := cluster(world, tc.n, tc.k, tc.maxIters)
				if err != nil {
					return err
				}
				// every rank ends with the same clustering
				if got.iters != want.iters || fmt.Sprint(got.centroids, got.counts) != fmt.Sprint(want.centroids, want.counts) {
					return fmt.Errorf("rank %d: %d iterations, %v, %v; want %d, %v, %v", world.Rank(),
						got.iters, got.centroids, got.counts, want.iters, want.centroids, want.counts)
				}
				return nil
			}, meshmpi.WithTimeout(time.Minute))
			require.NoError(t, err)
		})
	}
}

// check, which decides the exit status, fails on a wrong answer.
func TestCheckFails(t *testing.T) {
	res := reference(500, 3, 100)
	require.NoError(t, check(1, 500, 3, 100, res))
	res.counts[0]++
	require.Error(t, check(1, 500, 3, 100, res))
}
