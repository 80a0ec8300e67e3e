package meshmpi

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDimsCreateMPICH checks DimsCreate's choice among equally spread
// factorizations against cases of MPICH's test/mpi/topo/baddims.h (where
// the smaller largest factor, or the lexicographic first, is not MPICH's
// answer), and large inputs that the earlier exhaustive search could not
// finish.
func TestDimsCreateMPICH(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n, k int
		want []int
	}{
		{72, 2, []int{9, 8}},
		{815625, 2, []int{1125, 725}},
		{196800, 3, []int{82, 50, 48}},                    // spread 34, as 75×64×41: the larger smallest wins
		{122472, 10, []int{7, 4, 3, 3, 3, 3, 3, 3, 3, 2}}, // not 7×6×3⁶×2×2
		{416304, 5, []int{59, 14, 9, 8, 7}},               // not 59×12×12×7×7: the second smallest decides
		{25488, 4, []int{59, 9, 8, 6}},
		{110592, 10, []int{4, 4, 4, 4, 4, 3, 3, 3, 2, 2}},
		{120000, 10, []int{5, 5, 5, 5, 4, 3, 2, 2, 2, 2}},
		{2147483647, 3, []int{2147483647, 1, 1}}, // prime
		{1 << 30, 30, slices.Repeat([]int{2}, 30)},
		{1 << 30, 40, append(slices.Repeat([]int{2}, 30), slices.Repeat([]int{1}, 10)...)},
		{2095133040, 2, []int{46189, 45360}},
	} {
		got, err := DimsCreate(c.n, make([]int, c.k))
		require.NoError(t, err, "%d in %d dims", c.n, c.k)
		require.Equal(t, c.want, got, "%d in %d dims", c.n, c.k)
	}
}

// TestDimsCreateExhaustive compares balancedFactors with every
// non-increasing factorization for small node counts: the spread is the
// least, and among the least spread the answer is the largest from the
// back.
func TestDimsCreateExhaustive(t *testing.T) {
	t.Parallel()
	for k := 1; k <= 5; k++ {
		for n := 1; n <= 400; n++ {
			var want []int
			var all func(rest, limit int, cur []int)
			all = func(rest, limit int, cur []int) {
				if len(cur) == k {
					if rest != 1 {
						return
					}
					if want == nil || cur[0]-cur[k-1] < want[0]-want[k-1] ||
						cur[0]-cur[k-1] == want[0]-want[k-1] && revLexGreater(cur, want) {
						want = slices.Clone(cur)
					}
					return
				}
				for d := 1; d <= min(rest, limit); d++ {
					if rest%d == 0 {
						all(rest/d, d, append(cur, d))
					}
				}
			}
			all(n, n, nil)
			got, err := DimsCreate(n, make([]int, k))
			require.NoError(t, err)
			require.Equal(t, want, got, "%d in %d dims", n, k)
		}
	}
}
