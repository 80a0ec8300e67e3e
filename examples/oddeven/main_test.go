package main

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/stretchr/testify/require"
)

func TestSort(t *testing.T) {
	for _, tc := range []struct{ ranks, size int }{
		{1, 1},
		{1, 100},
		{2, 101},
		{3, 100}, // blocks of 34, 33, 33
		{4, 4},   // one key each
		{4, 1000},
		{7, 7},
		{7, 50},
		{7, 1001},
	} {
		t.Run(fmt.Sprintf("%d_ranks_%d_keys", tc.ranks, tc.size), func(t *testing.T) {
			want := make([]int64, tc.size)
			for i := range want {
				want[i] = key(i)
			}
			sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
			var got []int64
			err := meshmpi.Run(tc.ranks, func(world *meshmpi.Comm) error {
				sorted, _, err := sortKeys(world, tc.size)
				if world.Rank() == 0 {
					got = sorted
				}
				return err
			}, meshmpi.WithTimeout(time.Minute))
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}

// Blocks of uneven length may need more phases than there are blocks
// (the textbook's bound is for blocks of equal length), which is why the
// program stops when nothing moves instead of after n phases: blocks of
// 2, 1, 1, 1 keys, merge-split as the ranks do, are not sorted after 4
// phases, and are after 6.
func TestUnevenBlocksNeedMorePhases(t *testing.T) {
	blocks := [][]int64{{3, 4}, {2}, {1}, {0}}
	phase := func(parity int) {
		for r := parity; r+1 < len(blocks); r += 2 {
			theirs := slices.Clone(blocks[r+1])
			mergeSplit(blocks[r+1], blocks[r], false)
			mergeSplit(blocks[r], theirs, true)
		}
	}
	for p := range 4 {
		phase(p % 2)
	}
	require.Equal(t, [][]int64{{0, 2}, {1}, {3}, {4}}, blocks, "after 4 phases")
	phase(0)
	phase(1)
	require.Equal(t, [][]int64{{0, 1}, {2}, {3}, {4}}, blocks, "after 6 phases")
}

func TestTooFewKeys(t *testing.T) {
	err := meshmpi.Run(4, func(world *meshmpi.Comm) error {
		_, _, err := sortKeys(world, 3)
		return err
	}, meshmpi.WithTimeout(time.Minute))
	require.ErrorContains(t, err, "3 keys cannot be split over 4 ranks")
}

// check, which decides the exit status, fails on a wrong answer.
func TestCheckFails(t *testing.T) {
	want := make([]int64, 20)
	for i := range want {
		want[i] = key(i)
	}
	slices.Sort(want)
	require.NoError(t, check(1, 20, 2, want))
	want[3], want[4] = want[4], want[3]
	if want[3] == want[4] {
		want[3]++
	}
	require.Error(t, check(1, 20, 2, want))
}
