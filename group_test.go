package meshmpi

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Groups are values: a rank's world group, taken inside Run, stays valid
// after the world ends, so these tests check groups in the test goroutine
// with require. Every expected result comes from the naive reference below,
// which works on plain slices of world ranks and shares no code with
// group.go.

var groupWorldSizes = []int{1, 2, 5, 8}

// worldGroups runs a world of n ranks and returns each rank's world group.
func worldGroups(t *testing.T, n int) []*Group {
	t.Helper()
	gs := make([]*Group, n)
	require.NoError(t, Run(n, func(w *Comm) error {
		g, err := w.Group()
		gs[w.Rank()] = g
		return err
	}))
	for r, g := range gs {
		require.NotNil(t, g, "rank %d", r)
	}
	return gs
}

// members returns g's members as world ranks, in g's order.
func members(g *Group) []int { return append([]int{}, g.ranks...) }

// rankLists returns lists of distinct ranks of a group of n: empty, all in
// order, reversed, evens, odds reversed, the first, the last, and random
// subsets in random order.
func rankLists(n int, seed uint64) [][]int {
	var all, rev, evens, odds []int
	for i := range n {
		all = append(all, i)
		rev = append(rev, n-1-i)
		if i%2 == 0 {
			evens = append(evens, i)
		} else {
			odds = append([]int{i}, odds...)
		}
	}
	lists := [][]int{{}, all, rev, evens, odds}
	if n > 0 {
		lists = append(lists, []int{0}, []int{n - 1})
	}
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	for range 4 {
		perm := rng.Perm(n)
		lists = append(lists, perm[:rng.IntN(n+1)])
	}
	return lists
}

// Naive reference: a group is a slice of world ranks.

func refIncl(g, ranks []int) []int {
	out := []int{}
	for _, r := range ranks {
		out = append(out, g[r])
	}
	return out
}

func refExcl(g, ranks []int) []int {
	out := []int{}
	for i, x := range g {
		excluded := false
		for _, r := range ranks {
			if r == i {
				excluded = true
			}
		}
		if !excluded {
			out = append(out, x)
		}
	}
	return out
}

func refIndex(g []int, x int) int {
	for i, y := range g {
		if y == x {
			return i
		}
	}
	return Undefined
}

func refUnion(a, b []int) []int {
	out := append([]int{}, a...)
	for _, x := range b {
		if refIndex(a, x) == Undefined {
			out = append(out, x)
		}
	}
	return out
}

func refIntersection(a, b []int) []int {
	out := []int{}
	for _, x := range a {
		if refIndex(b, x) != Undefined {
			out = append(out, x)
		}
	}
	return out
}

func refDifference(a, b []int) []int {
	out := []int{}
	for _, x := range a {
		if refIndex(b, x) == Undefined {
			out = append(out, x)
		}
	}
	return out
}

func refTranslate(a, ranks, b []int) []int {
	out := []int{}
	for _, r := range ranks {
		if r == ProcNull {
			out = append(out, ProcNull)
		} else {
			out = append(out, refIndex(b, a[r]))
		}
	}
	return out
}

func refCompare(a, b []int) Comparison {
	if fmt.Sprint(a) == fmt.Sprint(b) {
		return Ident
	}
	sa, sb := append([]int{}, a...), append([]int{}, b...)
	sort.Ints(sa)
	sort.Ints(sb)
	if fmt.Sprint(sa) == fmt.Sprint(sb) {
		return Similar
	}
	return Unequal
}

// requireGroup checks g's size, members and the owner's rank in it.
func requireGroup(t *testing.T, g *Group, want []int, self int, what string) {
	t.Helper()
	require.NotNil(t, g, what)
	require.Equal(t, want, members(g), what)
	require.Equal(t, len(want), g.Size(), what)
	require.Equal(t, refIndex(want, self), g.Rank(), "%s: rank of world rank %d", what, self)
}

// derived is a group built from a rank's world group by Incl, with its
// reference members.
type derived struct {
	name string
	g    *Group
	ref  []int
}

func deriveGroups(t *testing.T, worldGroup *Group, n int) []derived {
	t.Helper()
	var out []derived
	for _, l := range rankLists(n, 1) {
		g, err := worldGroup.Incl(l)
		require.NoError(t, err)
		out = append(out, derived{fmt.Sprintf("incl%v", l), g, refIncl(identityRanks(n), l)})
	}
	return out
}

func TestGroupInclExcl(t *testing.T) {
	for _, n := range groupWorldSizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			for self, worldGroup := range worldGroups(t, n) {
				requireGroup(t, worldGroup, identityRanks(n), self, "world group")
				for _, d := range deriveGroups(t, worldGroup, n) {
					requireGroup(t, d.g, d.ref, self, d.name)
					// lists of ranks of d.g itself, so Incl and Excl nest
					for _, l := range rankLists(d.g.Size(), 2) {
						what := fmt.Sprintf("rank %d: %s.Incl(%v)", self, d.name, l)
						g, err := d.g.Incl(l)
						require.NoError(t, err, what)
						requireGroup(t, g, refIncl(d.ref, l), self, what)

						what = fmt.Sprintf("rank %d: %s.Excl(%v)", self, d.name, l)
						g, err = d.g.Excl(l)
						require.NoError(t, err, what)
						requireGroup(t, g, refExcl(d.ref, l), self, what)
					}
				}
				require.Equal(t, identityRanks(n), members(worldGroup), "operations must not change their operand")
			}
		})
	}
}

func TestGroupSetOperations(t *testing.T) {
	for _, n := range groupWorldSizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			for self, worldGroup := range worldGroups(t, n) {
				ds := deriveGroups(t, worldGroup, n)
				for _, a := range ds {
					for _, b := range ds {
						pair := fmt.Sprintf("rank %d: %s with %s", self, a.name, b.name)

						g, err := a.g.Union(b.g)
						require.NoError(t, err, pair)
						requireGroup(t, g, refUnion(a.ref, b.ref), self, "union "+pair)

						g, err = a.g.Intersection(b.g)
						require.NoError(t, err, pair)
						requireGroup(t, g, refIntersection(a.ref, b.ref), self, "intersection "+pair)

						g, err = a.g.Difference(b.g)
						require.NoError(t, err, pair)
						requireGroup(t, g, refDifference(a.ref, b.ref), self, "difference "+pair)

						cmp, err := a.g.Compare(b.g)
						require.NoError(t, err, pair)
						require.Equal(t, refCompare(a.ref, b.ref), cmp, "compare "+pair)

						require.Equal(t, a.ref, members(a.g), "operations must not change their operand")
						require.Equal(t, b.ref, members(b.g), "operations must not change their operand")
					}
				}
			}
		})
	}
}

func TestGroupCompare(t *testing.T) {
	worldGroup := worldGroups(t, 5)[0]
	incl := func(ranks ...int) *Group {
		g, err := worldGroup.Incl(ranks)
		require.NoError(t, err)
		return g
	}
	cases := []struct {
		name string
		a, b *Group
		want Comparison
	}{
		{"same group", worldGroup, worldGroup, Ident},
		{"same members same order", worldGroup, incl(0, 1, 2, 3, 4), Ident},
		{"same members other order", worldGroup, incl(4, 3, 2, 1, 0), Similar},
		{"rotated", incl(1, 2, 0), incl(0, 1, 2), Similar},
		{"subset", worldGroup, incl(0, 1, 2, 3), Unequal},
		{"superset", incl(0, 1), worldGroup, Unequal},
		{"same size, other members", incl(0, 1), incl(0, 2), Unequal},
		{"disjoint", incl(0, 1), incl(2, 3), Unequal},
		{"both empty", incl(), incl(), Ident},
		{"empty and not", incl(), incl(3), Unequal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.a.Compare(tc.b)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			got, err = tc.b.Compare(tc.a)
			require.NoError(t, err)
			require.Equal(t, tc.want, got, "compare is symmetric")
		})
	}
}

func TestGroupTranslateRanks(t *testing.T) {
	for _, n := range groupWorldSizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			for self, worldGroup := range worldGroups(t, n) {
				ds := deriveGroups(t, worldGroup, n)
				for _, a := range ds {
					// every rank of a, in a scrambled order with ProcNull mixed in
					ranks := []int{ProcNull}
					for _, r := range rand.New(rand.NewPCG(3, uint64(n))).Perm(a.g.Size()) {
						ranks = append(ranks, r, ProcNull)
					}
					for _, b := range ds {
						what := fmt.Sprintf("rank %d: translate %v from %s to %s", self, ranks, a.name, b.name)
						got, err := a.g.TranslateRanks(ranks, b.g)
						require.NoError(t, err, what)
						require.Equal(t, refTranslate(a.ref, ranks, b.ref), got, what)
					}
				}
			}
		})
	}
}

func TestGroupTranslateRanksUndefined(t *testing.T) {
	worldGroup := worldGroups(t, 5)[2]
	evens, err := worldGroup.Incl([]int{4, 2, 0})
	require.NoError(t, err)
	got, err := worldGroup.TranslateRanks([]int{0, 1, 2, 3, 4, ProcNull}, evens)
	require.NoError(t, err)
	require.Equal(t, []int{2, Undefined, 1, Undefined, 0, ProcNull}, got)
	got, err = evens.TranslateRanks([]int{0, 1, 2}, worldGroup)
	require.NoError(t, err)
	require.Equal(t, []int{4, 2, 0}, got)
	got, err = worldGroup.TranslateRanks(nil, evens)
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestGroupRank(t *testing.T) {
	const n = 5
	for self, worldGroup := range worldGroups(t, n) {
		for _, d := range deriveGroups(t, worldGroup, n) {
			require.Equal(t, refIndex(d.ref, self), d.g.Rank(), "rank %d in %s", self, d.name)
		}
		others, err := worldGroup.Excl([]int{self})
		require.NoError(t, err)
		require.Equal(t, Undefined, others.Rank(), "rank %d excluded", self)
		alone, err := worldGroup.Incl([]int{self})
		require.NoError(t, err)
		require.Equal(t, 0, alone.Rank())
		back, err := others.Union(alone)
		require.NoError(t, err)
		require.Equal(t, n-1, back.Rank(), "rank %d appended last by union", self)
	}
}

func TestGroupErrors(t *testing.T) {
	for _, n := range groupWorldSizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			g := worldGroups(t, n)[0]
			var null *Group
			cases := []struct {
				name string
				call func() (any, error)
				want error
			}{
				{"incl negative", func() (any, error) { return g.Incl([]int{-1}) }, ErrRank},
				{"incl size", func() (any, error) { return g.Incl([]int{n}) }, ErrRank},
				{"incl ProcNull", func() (any, error) { return g.Incl([]int{ProcNull}) }, ErrRank},
				{"incl Undefined", func() (any, error) { return g.Incl([]int{Undefined}) }, ErrRank},
				{"incl duplicate", func() (any, error) { return g.Incl([]int{0, 0}) }, ErrRank},
				{"incl duplicate last", func() (any, error) { return g.Incl([]int{n - 1, 0, n - 1}) }, ErrRank},
				{"excl negative", func() (any, error) { return g.Excl([]int{-1}) }, ErrRank},
				{"excl size", func() (any, error) { return g.Excl([]int{0, n}) }, ErrRank},
				{"excl duplicate", func() (any, error) { return g.Excl([]int{n - 1, n - 1}) }, ErrRank},
				{"translate negative", func() (any, error) { return g.TranslateRanks([]int{-1}, g) }, ErrRank},
				{"translate size", func() (any, error) { return g.TranslateRanks([]int{0, n}, g) }, ErrRank},
				{"translate Undefined", func() (any, error) { return g.TranslateRanks([]int{Undefined}, g) }, ErrRank},
				{"nil incl", func() (any, error) { return null.Incl(nil) }, ErrGroup},
				{"nil excl", func() (any, error) { return null.Excl(nil) }, ErrGroup},
				{"nil union", func() (any, error) { return null.Union(g) }, ErrGroup},
				{"union nil", func() (any, error) { return g.Union(nil) }, ErrGroup},
				{"nil intersection", func() (any, error) { return null.Intersection(g) }, ErrGroup},
				{"intersection nil", func() (any, error) { return g.Intersection(nil) }, ErrGroup},
				{"nil difference", func() (any, error) { return null.Difference(g) }, ErrGroup},
				{"difference nil", func() (any, error) { return g.Difference(nil) }, ErrGroup},
				{"nil translate", func() (any, error) { return null.TranslateRanks([]int{0}, g) }, ErrGroup},
				{"translate to nil", func() (any, error) { return g.TranslateRanks([]int{0}, nil) }, ErrGroup},
				{"nil compare", func() (any, error) { return null.Compare(g) }, ErrGroup},
				{"compare nil", func() (any, error) { return g.Compare(nil) }, ErrGroup},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					got, err := tc.call()
					require.ErrorIs(t, err, tc.want)
					switch v := got.(type) {
					case *Group:
						require.Nil(t, v)
					case []int:
						require.Nil(t, v)
					}
				})
			}
			require.Equal(t, identityRanks(n), members(g), "failed calls must not change the group")
			require.Equal(t, 0, null.Size())
			require.Equal(t, Undefined, null.Rank())
		})
	}
}
