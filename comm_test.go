package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Ranks run on their own goroutines, where t.Fatal must not be called: a
// rank returns an error (Run joins them, prefixed with the rank), or records
// what it saw in a per-rank slot that the test goroutine checks with require
// after Run returns. Expected communicators come from naive sequential
// references that share no code with comm.go.

var commWorldSizes = []int{1, 2, 3, 5, 8}

// expectEq returns an error describing a mismatch of got and want, which
// compare by their printed form (so slices compare too).
func expectEq[T any](what string, got, want T) error {
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("%s: got %v, want %v", what, got, want)
	}
	return nil
}

// ringCheck passes each rank's world rank to the next rank of c and checks
// that what arrives is the world rank of the previous one, members being
// c's expected members as world ranks. It proves that c carries messages
// and translates ranks as members says.
func ringCheck(c *Comm, members []int) error {
	r, n := c.Rank(), c.Size()
	me := []int64{int64(members[r])}
	got := []int64{-1}
	st, err := Sendrecv(c, me, (r+1)%n, 3, got, (r+n-1)%n, 3)
	if err != nil {
		return fmt.Errorf("ring on %s: %w", c, err)
	}
	return errors.Join(
		expectEq(fmt.Sprintf("ring on %s: value from the previous rank", c), got[0], int64(members[(r+n-1)%n])),
		expectEq(fmt.Sprintf("ring on %s: status source", c), st.Source, (r+n-1)%n))
}

// commMembers returns c's members as world ranks, through c's group.
func commMembers(c *Comm) ([]int, error) {
	g, err := c.Group()
	if err != nil {
		return nil, err
	}
	return members(g), nil
}

func TestCommRankSize(t *testing.T) {
	for _, n := range commWorldSizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			var mu sync.Mutex
			ranks, sizes := make([]int, n), make([]int, n)
			require.NoError(t, Run(n, func(w *Comm) error {
				r := w.Rank()
				if r < 0 || r >= n {
					return fmt.Errorf("rank %d outside a world of %d", r, n)
				}
				mu.Lock()
				ranks[r]++ // each rank exactly once
				sizes[r] = w.Size()
				mu.Unlock()
				return ringCheck(w, identityRanks(n))
			}))
			for r := range n {
				require.Equal(t, 1, ranks[r], "ranks reporting rank %d", r)
				require.Equal(t, n, sizes[r])
			}
		})
	}
	var null *Comm
	require.Equal(t, Undefined, null.Rank())
	require.Equal(t, 0, null.Size())
	require.Equal(t, "comm(nil)", null.String())
}

func TestCommDupCompare(t *testing.T) {
	for _, n := range commWorldSizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			type seen struct {
				rank, size                             int
				worldWorld, dupDup, worldDup, dupWorld Comparison
				dupDup2, groups                        Comparison
				reversed                               Comparison // world vs. a split with reversed keys
				half                                   Comparison // world vs. a split of half the ranks
			}
			got := make([]seen, n)
			require.NoError(t, Run(n, func(w *Comm) error {
				s := &got[w.Rank()]
				d, err := w.Dup()
				if err != nil {
					return err
				}
				d2, err := d.Dup()
				if err != nil {
					return err
				}
				rev, err := w.Split(0, -w.Rank())
				if err != nil {
					return err
				}
				half, err := w.Split(w.Rank()%2, 0)
				if err != nil {
					return err
				}
				s.rank, s.size = d.Rank(), d.Size()
				cmps := []struct {
					dst  *Comparison
					a, b *Comm
				}{
					{&s.worldWorld, w, w}, {&s.dupDup, d, d}, {&s.worldDup, w, d}, {&s.dupWorld, d, w},
					{&s.dupDup2, d, d2}, {&s.reversed, w, rev}, {&s.half, w, half},
				}
				for _, c := range cmps {
					if *c.dst, err = Compare(c.a, c.b); err != nil {
						return err
					}
				}
				gw, err := w.Group()
				if err != nil {
					return err
				}
				gd, err := d.Group()
				if err != nil {
					return err
				}
				if s.groups, err = gw.Compare(gd); err != nil {
					return err
				}
				return errors.Join(ringCheck(d, identityRanks(n)), ringCheck(d2, identityRanks(n)),
					d2.Free(), d.Free(), rev.Free(), half.Free())
			}))
			for r, s := range got {
				require.Equal(t, r, s.rank, "rank in the dup")
				require.Equal(t, n, s.size, "size of the dup")
				require.Equal(t, Ident, s.worldWorld, "Compare(world, world)")
				require.Equal(t, Ident, s.dupDup, "Compare(dup, dup)")
				require.Equal(t, Congruent, s.worldDup, "Compare(world, dup)")
				require.Equal(t, Congruent, s.dupWorld, "Compare(dup, world)")
				require.Equal(t, Congruent, s.dupDup2, "Compare(dup, dup of dup)")
				require.Equal(t, Ident, s.groups, "groups of world and dup")
				wantRev := Similar
				if n == 1 {
					wantRev = Congruent
				}
				require.Equal(t, wantRev, s.reversed, "Compare(world, split with reversed keys)")
				wantHalf := Unequal
				if n == 1 {
					wantHalf = Congruent
				}
				require.Equal(t, wantHalf, s.half, "Compare(world, split by parity)")
			}
		})
	}
}

// refSplit is MPI_Comm_split done by hand: for each rank i of the parent,
// the members of its new communicator as parent ranks in new-rank order, or
// nil for color Undefined. A member's new rank is the number of members
// before it by (key, parent rank).
func refSplit(colors, keys []int) [][]int {
	out := make([][]int, len(colors))
	for i := range colors {
		if colors[i] == Undefined {
			continue
		}
		var same []int
		for j := range colors {
			if colors[j] == colors[i] {
				same = append(same, j)
			}
		}
		out[i] = make([]int, len(same))
		for _, j := range same {
			before := 0
			for _, k := range same {
				if keys[k] < keys[j] || keys[k] == keys[j] && k < j {
					before++
				}
			}
			out[i][before] = j
		}
	}
	return out
}

// splitCase gives every rank of a world of n its color and key.
type splitCase struct {
	name       string
	color, key func(r, n int) int
}

func splitCases() []splitCase {
	zero := func(r, n int) int { return 0 }
	return []splitCase{
		{"one color, all keys tied", zero, zero},
		{"one color, reversed by negative keys", zero, func(r, n int) int { return -r }},
		{"parity, key rank", func(r, n int) int { return r % 2 }, func(r, n int) int { return r }},
		{"mod 3, negative keys with ties", func(r, n int) int { return r % 3 }, func(r, n int) int { return r%2 - 1 }},
		{"some undefined", func(r, n int) int {
			if r%3 == 1 {
				return Undefined
			}
			return r % 2
		}, func(r, n int) int { return n - r }},
		{"all undefined", func(r, n int) int { return Undefined }, zero},
		{"each alone", func(r, n int) int { return r }, zero},
		{"large colors and keys", func(r, n int) int { return (r % 2) << 40 }, func(r, n int) int { return (n - r) * -(1 << 50) }},
		{"random", func(r, n int) int {
			c := rand.New(rand.NewPCG(uint64(r), uint64(n))).IntN(4)
			if c == 3 {
				return Undefined
			}
			return c
		}, func(r, n int) int { return rand.New(rand.NewPCG(uint64(n), uint64(r))).IntN(5) - 2 }},
	}
}

// splitSeen is what a rank records about a communicator it got.
type splitSeen struct {
	null       bool
	rank, size int
	members    []int // world ranks
}

func recordComm(c *Comm) (splitSeen, error) {
	if c == nil {
		return splitSeen{null: true}, nil
	}
	m, err := commMembers(c)
	return splitSeen{rank: c.Rank(), size: c.Size(), members: m}, err
}

// requireSplit checks each world rank's record against ref, the reference
// members as world ranks (nil: not a member).
func requireSplit(t *testing.T, ref [][]int, got []splitSeen) {
	t.Helper()
	for r, want := range ref {
		if want == nil {
			require.True(t, got[r].null, "rank %d should get nil, got %+v", r, got[r])
			continue
		}
		require.False(t, got[r].null, "rank %d got nil, want members %v", r, want)
		require.Equal(t, want, got[r].members, "members seen by rank %d", r)
		require.Equal(t, len(want), got[r].size, "size seen by rank %d", r)
		require.Equal(t, slices.Index(want, r), got[r].rank, "rank of world rank %d", r)
	}
}

func TestCommSplit(t *testing.T) {
	for _, tc := range splitCases() {
		for _, n := range commWorldSizes {
			t.Run(fmt.Sprintf("%s/n=%d", tc.name, n), func(t *testing.T) {
				colors, keys := make([]int, n), make([]int, n)
				for r := range n {
					colors[r], keys[r] = tc.color(r, n), tc.key(r, n)
				}
				ref := refSplit(colors, keys)
				got := make([]splitSeen, n)
				require.NoError(t, Run(n, func(w *Comm) error {
					r := w.Rank()
					s, err := w.Split(colors[r], keys[r])
					if err != nil {
						return err
					}
					if got[r], err = recordComm(s); err != nil || s == nil {
						return err
					}
					return errors.Join(ringCheck(s, ref[r]), s.Free())
				}))
				requireSplit(t, ref, got)
			})
		}
	}
}

func TestCommSplitOfSplit(t *testing.T) {
	for _, n := range commWorldSizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			// first level: parity, reversed by negative keys
			color1 := func(r int) int { return r % 2 }
			key1 := func(r int) int { return -r }
			// second level, by rank in the first: pairs, one rank of every
			// five left out, keys tied by world rank mod 3
			color2 := func(r1, w int) int {
				if w%5 == 4 {
					return Undefined
				}
				return r1 / 2
			}
			key2 := func(r1, w int) int { return w % 3 }

			colors, keys := make([]int, n), make([]int, n)
			for r := range n {
				colors[r], keys[r] = color1(r), key1(r)
			}
			first := refSplit(colors, keys)
			ref := make([][]int, n)
			for w := range n {
				parent := first[w] // world ranks in first-level order
				c2, k2 := make([]int, len(parent)), make([]int, len(parent))
				for r1, pw := range parent {
					c2[r1], k2[r1] = color2(r1, pw), key2(r1, pw)
				}
				second := refSplit(c2, k2)[slices.Index(parent, w)]
				if second != nil {
					ref[w] = refIncl(parent, second)
				}
			}

			got := make([]splitSeen, n)
			require.NoError(t, Run(n, func(w *Comm) error {
				r := w.Rank()
				s1, err := w.Split(color1(r), key1(r))
				if err != nil {
					return err
				}
				s2, err := s1.Split(color2(s1.Rank(), r), key2(s1.Rank(), r))
				if err != nil {
					return err
				}
				if got[r], err = recordComm(s2); err != nil {
					return err
				}
				if s2 != nil {
					err = errors.Join(ringCheck(s2, ref[r]), s2.Free())
				}
				return errors.Join(err, ringCheck(s1, first[r]), s1.Free())
			}))
			requireSplit(t, ref, got)
		})
	}
}

func TestCommSplitBadColor(t *testing.T) {
	require.NoError(t, Run(3, func(w *Comm) error {
		s, err := w.Split(-5, 0)
		return errors.Join(expectErr(err, ErrArg, "split with color -5"), expectEq("communicator", s == nil, true))
	}))
}

func TestCommCreate(t *testing.T) {
	for _, n := range commWorldSizes {
		for li, list := range rankLists(n, 4) {
			t.Run(fmt.Sprintf("n=%d/incl%v", n, list), func(t *testing.T) {
				ref := make([][]int, n)
				for _, w := range list {
					ref[w] = append([]int{}, list...)
				}
				got := make([]splitSeen, n)
				cmps := make([]Comparison, n)
				require.NoError(t, Run(n, func(w *Comm) error {
					wg, err := w.Group()
					if err != nil {
						return err
					}
					g, err := wg.Incl(list)
					if err != nil {
						return err
					}
					c, err := w.Create(g)
					if err != nil {
						return err
					}
					r := w.Rank()
					if got[r], err = recordComm(c); err != nil || c == nil {
						return err
					}
					if cmps[r], err = Compare(w, c); err != nil {
						return err
					}
					return errors.Join(ringCheck(c, list), c.Free())
				}))
				requireSplit(t, ref, got)
				for _, w := range list {
					want := refCompare(identityRanks(n), list)
					if want == Ident {
						want = Congruent
					}
					require.Equal(t, want, cmps[w], "Compare(world, created) on rank %d (list %d)", w, li)
				}
			})
		}
	}
}

func TestCommCreateFromSplit(t *testing.T) {
	for _, n := range commWorldSizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			// halves by parity; each half creates the communicator of its
			// members in reverse, without its first member
			ref := make([][]int, n)
			for p := range 2 {
				var half []int
				for w := p; w < n; w += 2 {
					half = append(half, w)
				}
				if len(half) < 2 {
					continue
				}
				kept := slices.Clone(half[1:])
				slices.Reverse(kept)
				for _, w := range kept {
					ref[w] = kept
				}
			}
			got := make([]splitSeen, n)
			require.NoError(t, Run(n, func(w *Comm) error {
				s, err := w.Split(w.Rank()%2, 0)
				if err != nil {
					return err
				}
				sg, err := s.Group()
				if err != nil {
					return err
				}
				var list []int
				for r := s.Size() - 1; r >= 1; r-- {
					list = append(list, r)
				}
				g, err := sg.Incl(list)
				if err != nil {
					return err
				}
				c, err := s.Create(g)
				if err != nil {
					return err
				}
				if got[w.Rank()], err = recordComm(c); err != nil {
					return err
				}
				if c != nil {
					err = errors.Join(ringCheck(c, ref[w.Rank()]), c.Free())
				}
				return errors.Join(err, s.Free())
			}))
			requireSplit(t, ref, got)
		})
	}
}

func TestCommCreateErrors(t *testing.T) {
	require.NoError(t, Run(4, func(w *Comm) error {
		s, err := w.Split(w.Rank()%2, 0)
		if err != nil {
			return err
		}
		wg, err := w.Group()
		if err != nil {
			return err
		}
		other, err := wg.Incl([]int{(w.Rank() + 1) % 4}) // a rank of the other half
		if err != nil {
			return err
		}
		c1, err1 := s.Create(wg)
		c2, err2 := s.Create(other)
		c3, err3 := s.Create(nil)
		return errors.Join(
			expectErr(err1, ErrGroup, "create over the world's group on a half"),
			expectErr(err2, ErrGroup, "create over a rank of the other half"),
			expectErr(err3, ErrGroup, "create over a nil group"),
			expectEq("communicators", []bool{c1 == nil, c2 == nil, c3 == nil}, []bool{true, true, true}),
			ringCheck(s, []int{w.Rank() % 2, w.Rank()%2 + 2}), // s still works
			s.Free())
	}))
}

// commCalls are the operations that must fail with ErrComm on a freed or nil
// communicator; other is a valid communicator of the same rank.
func commCalls(other *Comm) []struct {
	name string
	call func(c *Comm) error
} {
	buf := []int32{0}
	return []struct {
		name string
		call func(c *Comm) error
	}{
		{"send", func(c *Comm) error { return Send(c, buf, 0, 0) }},
		{"ssend", func(c *Comm) error { return Ssend(c, buf, 0, 0) }},
		{"recv", func(c *Comm) error { _, err := Recv(c, buf, 0, 0); return err }},
		{"isend", func(c *Comm) error { _, err := Isend(c, buf, 0, 0); return err }},
		{"irecv", func(c *Comm) error { _, err := Irecv(c, buf, AnySource, AnyTag); return err }},
		{"send init", func(c *Comm) error { _, err := SendInit(c, buf, 0, 0); return err }},
		{"sendrecv", func(c *Comm) error { _, err := Sendrecv(c, buf, 0, 0, buf, 0, 0); return err }},
		{"iprobe", func(c *Comm) error { _, _, err := c.Iprobe(AnySource, AnyTag); return err }},
		{"probe", func(c *Comm) error { _, err := c.Probe(AnySource, AnyTag); return err }},
		{"dup", func(c *Comm) error { _, err := c.Dup(); return err }},
		{"split", func(c *Comm) error { _, err := c.Split(0, 0); return err }},
		{"create", func(c *Comm) error {
			g, err := other.Group()
			if err != nil {
				return err
			}
			_, err = c.Create(g)
			return err
		}},
		{"group", func(c *Comm) error { _, err := c.Group(); return err }},
		{"free", func(c *Comm) error { return c.Free() }},
		{"compare with it", func(c *Comm) error { _, err := Compare(other, c); return err }},
		{"compare it", func(c *Comm) error { _, err := Compare(c, other); return err }},
		{"compare with itself", func(c *Comm) error { _, err := Compare(c, c); return err }},
	}
}

func TestCommFreed(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			require.NoError(t, Run(n, func(w *Comm) error {
				d, err := w.Dup()
				if err != nil {
					return err
				}
				if err := d.Free(); err != nil {
					return fmt.Errorf("first free: %w", err)
				}
				var errs []error
				for _, tc := range commCalls(w) {
					errs = append(errs, expectErr(tc.call(d), ErrComm, tc.name+" on a freed communicator"))
				}
				return errors.Join(errs...)
			}))
		})
	}
}

func TestCommNil(t *testing.T) {
	require.NoError(t, Run(2, func(w *Comm) error {
		var errs []error
		for _, tc := range commCalls(w) {
			errs = append(errs, expectErr(tc.call(nil), ErrComm, tc.name+" on a nil communicator"))
		}
		return errors.Join(errs...)
	}))
}

func TestCommFreeWorld(t *testing.T) {
	require.NoError(t, Run(3, func(w *Comm) error {
		err := w.Free()
		return errors.Join(
			expectErr(err, ErrComm, "free the world"),
			expectErr(w.Free(), ErrComm, "free the world again"),
			ringCheck(w, identityRanks(3))) // the world still works
	}))
}

func TestCommDoubleFree(t *testing.T) {
	require.NoError(t, Run(2, func(w *Comm) error {
		s, err := w.Split(0, w.Rank())
		if err != nil {
			return err
		}
		return errors.Join(s.Free(), expectErr(s.Free(), ErrComm, "second free"))
	}))
}

// isolationPair builds two communicators over the same ranks in the same
// order, a and b, with different contexts.
type isolationPair struct {
	name string
	make func(w *Comm) (a, b *Comm, err error)
}

func isolationPairs() []isolationPair {
	same := func(w *Comm) (*Comm, error) { return w.Split(7, 0) }
	return []isolationPair{
		{"dup and parent", func(w *Comm) (*Comm, *Comm, error) {
			d, err := w.Dup()
			return w, d, err
		}},
		{"parent and dup", func(w *Comm) (*Comm, *Comm, error) {
			d, err := w.Dup()
			return d, w, err
		}},
		{"split and parent", func(w *Comm) (*Comm, *Comm, error) {
			s, err := same(w)
			return w, s, err
		}},
		{"split siblings", func(w *Comm) (*Comm, *Comm, error) {
			a, err := same(w)
			if err != nil {
				return nil, nil, err
			}
			b, err := same(w)
			return a, b, err
		}},
		{"dup siblings", func(w *Comm) (*Comm, *Comm, error) {
			a, err := w.Dup()
			if err != nil {
				return nil, nil, err
			}
			b, err := w.Dup()
			return a, b, err
		}},
		{"created and parent", func(w *Comm) (*Comm, *Comm, error) {
			g, err := w.Group()
			if err != nil {
				return nil, nil, err
			}
			c, err := w.Create(g)
			return w, c, err
		}},
		{"split of a split and its parent", func(w *Comm) (*Comm, *Comm, error) {
			a, err := same(w)
			if err != nil {
				return nil, nil, err
			}
			b, err := a.Split(0, 0)
			return a, b, err
		}},
	}
}

// TestCommContextIsolation sends a message on one communicator and then one
// with the same source and tag on the other; the receiver takes the second
// first, by source and tag and by wildcards, and must get the second's data.
func TestCommContextIsolation(t *testing.T) {
	for _, pair := range isolationPairs() {
		for _, n := range []int{2, 4} {
			for _, count := range []int{1, 100_000} { // eager and rendezvous
				for _, wild := range []bool{false, true} {
					name := fmt.Sprintf("%s/n=%d/count=%d/wildcards=%v", pair.name, n, count, wild)
					t.Run(name, func(t *testing.T) {
						require.NoError(t, Run(n, func(w *Comm) error {
							a, b, err := pair.make(w)
							if err != nil {
								return err
							}
							err = isolate(a, b, count, wild)
							for _, c := range []*Comm{a, b} {
								if c != w {
									err = errors.Join(err, c.Free())
								}
							}
							return err
						}))
					})
				}
			}
		}
	}
}

// isolate sends A on a then B on b, same tag, from rank 0 to the last rank,
// which receives on b first.
func isolate(a, b *Comm, count int, wild bool) error {
	const tag = 5
	last := a.Size() - 1
	data := func(v int32) []int32 {
		s := make([]int32, count)
		for i := range s {
			s[i] = v + int32(i)
		}
		return s
	}
	switch a.Rank() {
	case 0:
		ra, err := Isend(a, data(1000), last, tag)
		if err != nil {
			return err
		}
		rb, err := Isend(b, data(2000), last, tag)
		if err != nil {
			return err
		}
		return Waitall(context.Background(), []*Request{ra, rb}, nil)
	case last:
		src, tg := 0, tag
		if wild {
			src, tg = AnySource, AnyTag
		}
		got := make([]int32, count)
		st, err := Recv(b, got, src, tg)
		if err != nil {
			return fmt.Errorf("receive on b: %w", err)
		}
		errs := []error{
			expectEq("b's message, first element", got[0], int32(2000)),
			expectEq("b's message, last element", got[count-1], int32(2000+count-1)),
			expectEq("b's status", []int{st.Source, st.Tag, st.Count}, []int{0, tag, count}),
		}
		st, err = Recv(a, got, src, tg)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("receive on a: %w", err))...)
		}
		return errors.Join(append(errs,
			expectEq("a's message, first element", got[0], int32(1000)),
			expectEq("a's message, last element", got[count-1], int32(1000+count-1)),
			expectEq("a's status", []int{st.Source, st.Tag, st.Count}, []int{0, tag, count}))...)
	}
	return nil
}

// TestCommCollectiveContext checks that the traffic of communicator
// construction (a collective) never meets user point-to-point traffic: a
// receive with wildcards posted before a Dup, and an unexpected user
// message with the tags the construction uses, both survive it.
func TestCommCollectiveContext(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			require.NoError(t, Run(n, func(w *Comm) error {
				r, last := w.Rank(), n-1
				buf := []int64{-1}
				var posted *Request
				if r == 0 {
					// a wildcard receive waiting through the Dups
					var err error
					if posted, err = Irecv(w, buf, AnySource, AnyTag); err != nil {
						return err
					}
					// unexpected user messages with the tags the Dups use
					for tag := range 3 {
						if err := Send(w, []int64{int64(100 + tag)}, last, tag); err != nil {
							return err
						}
					}
				}
				var dups []*Comm
				for range 3 {
					d, err := w.Dup()
					if err != nil {
						return err
					}
					dups = append(dups, d)
				}
				var errs []error
				switch r {
				case last:
					for tag := range 3 {
						got := []int64{-1}
						st, err := Recv(w, got, 0, AnyTag)
						errs = append(errs, err, expectEq("unexpected user message", []int{int(got[0]), st.Tag}, []int{100 + tag, tag}))
					}
					errs = append(errs, Send(w, []int64{42}, 0, 9))
				case 0:
					st, err := posted.Wait(context.Background())
					errs = append(errs, err, expectEq("wildcard receive", []int{int(buf[0]), st.Source, st.Tag}, []int{42, last, 9}))
				}
				for _, d := range dups {
					errs = append(errs, ringCheck(d, identityRanks(n)), d.Free())
				}
				return errors.Join(errs...)
			}))
		})
	}
}

// TestCommManyDupFree creates and frees thousands of communicators: the
// context ids must come back, every rank must agree on each one, and each
// must carry messages.
func TestCommManyDupFree(t *testing.T) {
	const n, rounds = 3, 5000
	require.NoError(t, Run(n, func(w *Comm) error {
		for i := range rounds {
			var c *Comm
			var err error
			switch i % 3 {
			case 0:
				c, err = w.Dup()
			case 1:
				c, err = w.Split(0, -w.Rank()) // reversed
			case 2:
				var g *Group
				if g, err = w.Group(); err == nil {
					c, err = w.Create(g)
				}
			}
			if err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
			// every rank passes its id for c to the next
			r := c.Rank()
			id := []int64{int64(c.id)}
			got := []int64{-1}
			if _, err := Sendrecv(c, id, (r+1)%n, i, got, (r+n-1)%n, i); err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
			if got[0] != id[0] {
				return fmt.Errorf("round %d: context id %d here, %d on the previous rank", i, id[0], got[0])
			}
			if err := c.Free(); err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
		}
		w.p.mu.Lock()
		free := w.p.ctxUsed.lowestFree()
		w.p.mu.Unlock()
		return expectEq("lowest free context id after freeing all", free, selfContext+1)
	}))
}

// TestCommManyLive keeps many communicators alive at once: each gets its own
// context, so a message sent on each (same source and tag everywhere) is
// received on that one alone, whatever the order.
func TestCommManyLive(t *testing.T) {
	const n, live = 3, 200
	require.NoError(t, Run(n, func(w *Comm) error {
		comms := []*Comm{w}
		for len(comms) < live {
			parent := comms[len(comms)/2]
			c, err := parent.Dup()
			if err != nil {
				return err
			}
			comms = append(comms, c)
		}
		r := w.Rank()
		for i, c := range comms {
			if err := Send(c, []int64{int64(i)}, (r+1)%n, 0); err != nil {
				return err
			}
		}
		var errs []error
		for i := len(comms) - 1; i >= 0; i-- {
			got := []int64{-1}
			_, err := Recv(comms[i], got, (r+n-1)%n, 0)
			errs = append(errs, err, expectEq(fmt.Sprintf("message on communicator %d", i), got[0], int64(i)))
		}
		for _, c := range comms[1:] {
			errs = append(errs, c.Free())
		}
		return errors.Join(errs...)
	}))
}

// TestCommContextExhaustion uses every context id: the next construction
// fails with ErrComm on every rank instead of reusing an id or hanging, and
// freeing one communicator makes room again.
func TestCommContextExhaustion(t *testing.T) {
	counts := make([]int, 2)
	require.NoError(t, Run(2, func(w *Comm) error {
		var comms []*Comm
		var err error
		for {
			var c *Comm
			if c, err = w.Dup(); err != nil {
				break
			}
			comms = append(comms, c)
		}
		counts[w.Rank()] = len(comms)
		errs := []error{expectErr(err, ErrComm, "dup with every id taken")}
		mid := comms[len(comms)/2]
		errs = append(errs, mid.Free())
		c, err := w.Dup()
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("dup after a free: %w", err))...)
		}
		errs = append(errs, ringCheck(c, identityRanks(2)), ringCheck(comms[0], identityRanks(2)), c.Free())
		for _, c := range comms {
			if c != mid {
				errs = append(errs, c.Free())
			}
		}
		return errors.Join(errs...)
	}))
	require.Equal(t, counts[0], counts[1], "ranks created different numbers of communicators")
	require.Equal(t, ctxWords*64-2, counts[0], "communicators besides the world and self")
}

// TestCommConcurrentCreate builds communicators on two different
// communicators at once, from two goroutines of each rank. Comm's doc
// only orders collective calls on one Comm, so this is allowed (MPI calls
// it MPI_THREAD_MULTIPLE); the new communicators share their members and
// must not share a context.
func TestCommConcurrentCreate(t *testing.T) {
	const n, rounds = 2, 200
	require.NoError(t, Run(n, func(w *Comm) error {
		base, err := w.Dup()
		if err != nil {
			return err
		}
		for i := range rounds {
			var a, b *Comm
			var errA, errB error
			var wg sync.WaitGroup
			wg.Go(func() { a, errA = w.Dup() })
			wg.Go(func() { b, errB = base.Dup() })
			wg.Wait()
			if err := errors.Join(errA, errB); err != nil {
				return err
			}
			// the ranks must agree on each id (checked over the world,
			// which is safe), and the two must differ
			ids := []int64{int64(a.id), int64(b.id)}
			other := make([]int64, 2)
			if _, err := Sendrecv(w, ids, 1-w.Rank(), i, other, 1-w.Rank(), i); err != nil {
				return err
			}
			if other[0] != ids[0] || other[1] != ids[1] {
				return fmt.Errorf("round %d: context ids %v here, %v on the other rank", i, ids, other)
			}
			if a.id == b.id {
				err := fmt.Errorf("round %d: two live communicators over the same ranks share context id %d", i, a.id)
				return errors.Join(err, isolate(a, b, 1, false))
			}
			if err := errors.Join(isolate(a, b, 1, false), a.Free(), b.Free()); err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
		}
		return base.Free()
	}))
}

// TestCommFreeWithPendingReceive frees a communicator while a receive on it
// is pending. MPI-4.1 §7.4.3: "Any pending operations that use this
// communicator will complete normally"; so the receive must still get the
// message sent on the freed communicator, and a communicator created after
// the free must not capture that receive's messages, or the other way round.
//
// World of 3: d spans everyone, t = {0, 1}. Ranks 0 and 1 free d (rank 0
// with a wildcard receive on d pending) and duplicate t; rank 1 sends on the
// duplicate; only then does rank 2, which still holds d, send on d.
func TestCommFreeWithPendingReceive(t *testing.T) {
	require.NoError(t, Run(3, func(w *Comm) error {
		d, err := w.Dup()
		if err != nil {
			return err
		}
		color := 0
		if w.Rank() == 2 {
			color = Undefined
		}
		tc, err := w.Split(color, 0)
		if err != nil {
			return err
		}
		const tag = 5
		switch w.Rank() {
		case 0:
			fromD, fromT2 := []int64{-1}, []int64{-1}
			rd, err := Irecv(d, fromD, AnySource, tag)
			if err != nil {
				return err
			}
			if err := d.Free(); err != nil {
				return err
			}
			t2, err := tc.Dup()
			if err != nil {
				return err
			}
			rt, err := Irecv(t2, fromT2, 1, tag)
			if err != nil {
				return err
			}
			if _, err := Recv(w, []int64{0}, 1, 1); err != nil { // rank 1 has sent on t2
				return err
			}
			if err := Send(w, []int64{0}, 2, 1); err != nil { // rank 2 may send on d
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			var sts [2]Status
			if err := Waitall(ctx, []*Request{rd, rt}, sts[:]); err != nil {
				return fmt.Errorf("receives on the freed d and on t2 (got %d on d, %d on t2): %w", fromD[0], fromT2[0], err)
			}
			return errors.Join(
				expectEq("receive pending on the freed d (value, source)", []int64{fromD[0], int64(sts[0].Source)}, []int64{222, 2}),
				expectEq("receive on t2 (value, source)", []int64{fromT2[0], int64(sts[1].Source)}, []int64{111, 1}),
				t2.Free(), tc.Free())
		case 1:
			if err := d.Free(); err != nil {
				return err
			}
			t2, err := tc.Dup()
			if err != nil {
				return err
			}
			return errors.Join(Send(t2, []int64{111}, 0, tag), Send(w, []int64{0}, 0, 1), t2.Free(), tc.Free())
		default:
			if _, err := Recv(w, []int64{0}, 0, 1); err != nil {
				return err
			}
			return errors.Join(Send(d, []int64{222}, 0, tag), d.Free())
		}
	}))
}
