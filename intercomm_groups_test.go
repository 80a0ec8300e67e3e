package meshmpi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIntercommCreateFromGroups joins two disjoint groups of a world of
// n (every second rank, and the rest; the first half and the rest) and
// checks the intercommunicator's sizes and traffic: each rank sends its
// world rank to the remote rank of its own local rank, when there is one.
func TestIntercommCreateFromGroups(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		n     int
		split func(rank, n int) bool // true: in the first group
		lead  [2]int                 // the leaders, ranks in each group
	}{
		{"two ranks", 2, func(r, _ int) bool { return r == 0 }, [2]int{0, 0}},
		{"evens and odds", 4, func(r, _ int) bool { return r%2 == 0 }, [2]int{0, 1}},
		{"one and three", 4, func(r, _ int) bool { return r == 3 }, [2]int{0, 2}},
		{"halves of five", 5, func(r, n int) bool { return r < n/2 }, [2]int{1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, Run(c.n, func(w *Comm) error {
				wg, err := w.Group()
				require.NoError(t, err)
				var a, b []int
				for r := range c.n {
					if c.split(r, c.n) {
						a = append(a, r)
					} else {
						b = append(b, r)
					}
				}
				ga, err := wg.Incl(a)
				require.NoError(t, err)
				gb, err := wg.Incl(b)
				require.NoError(t, err)
				local, remote, ll, rl := ga, gb, c.lead[0], c.lead[1]
				if !c.split(w.Rank(), c.n) {
					local, remote, ll, rl = gb, ga, c.lead[1], c.lead[0]
				}
				ic, err := IntercommCreateFromGroups(w, local, ll, remote, rl, "from groups")
				require.NoError(t, err)
				require.True(t, ic.TestInter())
				require.Equal(t, local.Size(), ic.Size())
				require.Equal(t, remote.Size(), ic.RemoteSize())
				require.Equal(t, local.Rank(), ic.Rank())
				if me := ic.Rank(); me < ic.RemoteSize() && me < remote.Size() && me < local.Size() {
					got := make([]int32, 1)
					_, err := Sendrecv(ic, []int32{int32(w.Rank())}, me, 5, got, me, 5)
					require.NoError(t, err)
					want, err := remote.TranslateRanks([]int{me}, wg)
					require.NoError(t, err)
					require.Equal(t, int32(want[0]), got[0])
				}
				require.NoError(t, Barrier(ic))
				return ic.Free()
			}))
		})
	}
}

// TestIntercommCreateFromGroupsArgs: bad arguments are errors at the
// caller, and leaders that pass different tags both fail.
func TestIntercommCreateFromGroupsArgs(t *testing.T) {
	t.Parallel()
	require.NoError(t, Run(2, func(w *Comm) error {
		wg, err := w.Group()
		require.NoError(t, err)
		me, err := wg.Incl([]int{w.Rank()})
		require.NoError(t, err)
		other, err := wg.Incl([]int{1 - w.Rank()})
		require.NoError(t, err)
		empty, err := wg.Incl(nil)
		require.NoError(t, err)
		for _, c := range []struct {
			name          string
			parent        *Comm
			local, remote *Group
			ll, rl        int
			want          error
		}{
			{"nil parent", nil, me, other, 0, 0, ErrComm},
			{"nil group", w, nil, other, 0, 0, ErrGroup},
			{"empty remote", w, me, empty, 0, 0, ErrGroup},
			{"caller outside local", w, other, me, 0, 0, ErrGroup},
			{"local leader out of range", w, me, other, 1, 0, ErrRank},
			{"remote leader out of range", w, me, other, 0, -1, ErrRank},
		} {
			_, err := IntercommCreateFromGroups(c.parent, c.local, c.ll, c.remote, c.rl, "x")
			require.ErrorIs(t, err, c.want, c.name)
		}
		// the two leaders pass different tags: both fail, neither hangs
		_, err = IntercommCreateFromGroups(w, me, 0, other, 0, []string{"left", "right"}[w.Rank()])
		require.ErrorIs(t, err, ErrArg)
		return nil
	}))
}
