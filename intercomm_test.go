package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
)

// interSplits are the group sizes the intercommunicator tests sweep: equal,
// odd and non-power-of-two splits, either group the larger.
var interSplits = [][2]int{{1, 1}, {1, 3}, {2, 3}, {3, 2}, {3, 5}, {4, 4}}

// interX is one rank's view of a test intercommunicator: group A is world
// ranks [0, sz[0]), group B the rest.
type interX struct {
	c    *Comm
	g, r int    // this rank's group (0: A, 1: B) and rank in it
	sz   [2]int // group sizes
}

func (x *interX) o() int { return 1 - x.g } // the other group

// newInter splits the world into the two groups and joins them (tag 7).
func newInter(w *Comm, nA int) (*interX, error) {
	x := &interX{g: 0, sz: [2]int{nA, w.Size() - nA}}
	remoteLeader := nA
	if w.Rank() >= nA {
		x.g, remoteLeader = 1, 0
	}
	local, err := w.Split(x.g, 0)
	if err != nil {
		return nil, err
	}
	x.r = local.Rank()
	if x.c, err = IntercommCreate(local, 0, w, remoteLeader, 7); err != nil {
		return nil, err
	}
	return x, errors.Join(local.Free(), expect(x.c.TestInter() && x.c.Size() == x.sz[x.g] && x.c.RemoteSize() == x.sz[x.o()],
		"intercomm of size %d, remote %d", x.c.Size(), x.c.RemoteSize()))
}

// in is the input of rank r of group g in run seed: n elements unique to
// (group, rank, seed, index).
func in(g, r, seed, n int) []int64 {
	b := make([]int64, n)
	for i := range b {
		b[i] = int64(g)<<50 | int64(r)<<40 | int64(seed)<<20 | int64(i)
	}
	return b
}

// interRun is one case at one rank: fill sets the inputs of a run, call
// makes the call in a form, check compares the outputs with the naive
// reference.
type interRun struct {
	fill  func(seed int)
	call  func(form collForm) (*Request, error)
	check func(seed int) error
}

// runInter runs a case in a form for three seeds; a persistent request is
// made once and started with the inputs changed before every start.
func runInter(run interRun, form collForm) error {
	ctx := context.Background()
	var req *Request
	for seed := range 3 {
		run.fill(seed)
		var err error
		switch {
		case form == persistent && req == nil:
			if req, err = run.call(form); err == nil {
				err = req.Start()
			}
		case form == persistent:
			err = req.Start()
		default:
			req, err = run.call(form)
		}
		if err == nil && req != nil {
			_, err = req.Wait(ctx)
		}
		if err != nil {
			return fmt.Errorf("seed %d: %w", seed, err)
		}
		if err := run.check(seed); err != nil {
			return fmt.Errorf("seed %d: %w", seed, err)
		}
		if form != persistent {
			req = nil
		}
	}
	if req != nil {
		return req.Free()
	}
	return nil
}

func same(what string, got, want []int64) error {
	return expect(slices.Equal(got, want), "%s: got %v, want %v", what, got, want)
}

// root returns the root argument of rank x for a root at rank rr of group
// rg.
func (x *interX) root(rg, rr int) int {
	switch {
	case x.g != rg:
		return rr
	case x.r == rr:
		return Root
	}
	return ProcNull
}

// interCases are the cases of every intercommunicator collective; rooted
// ones for a root at rank rr of group rg.
func interCases(rg, rr int) []struct {
	name string
	make func(x *interX) interRun
} {
	type cs = struct {
		name string
		make func(x *interX) interRun
	}
	atRoot := func(x *interX) bool { return x.g == rg && x.r == rr }
	other := func(x *interX) bool { return x.g != rg }
	vc := func(g, r int) int { return (r + g) % 3 } // v-counts, zeros included
	return []cs{
		{"bcast", func(x *interX) interRun {
			buf := make([]int64, 5)
			return interRun{
				fill: func(seed int) {
					clear(buf)
					if atRoot(x) {
						copy(buf, in(rg, rr, seed, 5))
					}
				},
				call: func(f collForm) (*Request, error) {
					root := x.root(rg, rr)
					return formCall(f, func() error { return Bcast(x.c, buf, root) }, func() (*Request, error) { return Ibcast(x.c, buf, root) }, func() (*Request, error) { return BcastInit(x.c, buf, root) })
				},
				check: func(seed int) error {
					want := make([]int64, 5)
					if atRoot(x) || other(x) {
						want = in(rg, rr, seed, 5)
					}
					return same("bcast", buf, want)
				},
			}
		}},
		{"gather", func(x *interX) interRun {
			const n = 3
			var send, recv []int64
			if atRoot(x) {
				recv = make([]int64, x.sz[x.o()]*n)
			}
			if other(x) {
				send = make([]int64, n)
			}
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, n)); clear(recv) },
				call: func(f collForm) (*Request, error) {
					root := x.root(rg, rr)
					return formCall(f, func() error { return Gather(x.c, send, recv, root) }, func() (*Request, error) { return Igather(x.c, send, recv, root) }, func() (*Request, error) { return GatherInit(x.c, send, recv, root) })
				},
				check: func(seed int) error {
					if !atRoot(x) {
						return nil
					}
					var want []int64
					for j := range x.sz[x.o()] {
						want = append(want, in(x.o(), j, seed, n)...)
					}
					return same("gather", recv, want)
				},
			}
		}},
		{"gatherv", func(x *interX) interRun {
			var send, recv []int64
			var counts, displs []int
			if atRoot(x) {
				at := 0
				for j := range x.sz[x.o()] {
					counts, displs = append(counts, vc(x.o(), j)), append(displs, at+1) // a gap before each block
					at += 1 + vc(x.o(), j)
				}
				recv = make([]int64, at)
			}
			if other(x) {
				send = make([]int64, vc(x.g, x.r))
			}
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, len(send))); clear(recv) },
				call: func(f collForm) (*Request, error) {
					root := x.root(rg, rr)
					return formCall(f, func() error { return Gatherv(x.c, send, recv, counts, displs, root) }, func() (*Request, error) { return Igatherv(x.c, send, recv, counts, displs, root) }, func() (*Request, error) { return GathervInit(x.c, send, recv, counts, displs, root) })
				},
				check: func(seed int) error {
					if !atRoot(x) {
						return nil
					}
					want := make([]int64, len(recv))
					for j := range counts {
						copy(want[displs[j]:], in(x.o(), j, seed, counts[j]))
					}
					return same("gatherv", recv, want)
				},
			}
		}},
		{"scatter", func(x *interX) interRun {
			const n = 2
			send, recv := []int64(nil), make([]int64, n)
			if atRoot(x) {
				send = make([]int64, x.sz[x.o()]*n)
			}
			return interRun{
				fill: func(seed int) { copy(send, in(rg, rr, seed, len(send))); clear(recv) },
				call: func(f collForm) (*Request, error) {
					root := x.root(rg, rr)
					if !other(x) {
						recv = nil
					}
					return formCall(f, func() error { return Scatter(x.c, send, recv, root) }, func() (*Request, error) { return Iscatter(x.c, send, recv, root) }, func() (*Request, error) { return ScatterInit(x.c, send, recv, root) })
				},
				check: func(seed int) error {
					if !other(x) {
						return nil
					}
					return same("scatter", recv, in(rg, rr, seed, x.sz[x.g]*n)[x.r*n:(x.r+1)*n])
				},
			}
		}},
		{"scatterv", func(x *interX) interRun {
			var send, recv []int64
			var counts, displs []int
			if atRoot(x) {
				at := 0
				for j := range x.sz[x.o()] {
					counts, displs = append(counts, vc(x.o(), j)), append(displs, at)
					at += vc(x.o(), j)
				}
				send = make([]int64, at)
			}
			if other(x) {
				recv = make([]int64, vc(x.g, x.r))
			}
			return interRun{
				fill: func(seed int) {
					copy(send, in(rg, rr, seed, len(send)))
					clear(recv)
				},
				call: func(f collForm) (*Request, error) {
					root := x.root(rg, rr)
					return formCall(f, func() error { return Scatterv(x.c, send, counts, displs, recv, root) }, func() (*Request, error) { return Iscatterv(x.c, send, counts, displs, recv, root) }, func() (*Request, error) { return ScattervInit(x.c, send, counts, displs, recv, root) })
				},
				check: func(seed int) error {
					if !other(x) {
						return nil
					}
					at := 0
					for j := range x.r {
						at += vc(x.g, j)
					}
					total := at
					for j := x.r; j < x.sz[x.g]; j++ {
						total += vc(x.g, j)
					}
					return same("scatterv", recv, in(rg, rr, seed, total)[at:at+len(recv)])
				},
			}
		}},
		{"reduce", func(x *interX) interRun {
			const n = 3
			var send, recv []int64
			if atRoot(x) {
				recv = make([]int64, n)
			}
			if other(x) {
				send = make([]int64, n)
			}
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, n)); clear(recv) },
				call: func(f collForm) (*Request, error) {
					root := x.root(rg, rr)
					return formCall(f, func() error { return Reduce(x.c, send, recv, Sum, root) }, func() (*Request, error) { return Ireduce(x.c, send, recv, Sum, root) }, func() (*Request, error) { return ReduceInit(x.c, send, recv, Sum, root) })
				},
				check: func(seed int) error {
					if !atRoot(x) {
						return nil
					}
					return same("reduce", recv, sumOf(x.o(), x.sz[x.o()], seed, n))
				},
			}
		}},
		{"barrier", func(x *interX) interRun {
			return interRun{
				fill: func(seed int) { interEntered[seed%3][x.g].Add(1) },
				call: func(f collForm) (*Request, error) {
					return formCall(f, func() error { return Barrier(x.c) }, func() (*Request, error) { return Ibarrier(x.c) }, func() (*Request, error) { return BarrierInit(x.c) })
				},
				check: func(seed int) error {
					// every rank of the other group entered before this one left
					n := interEntered[seed%3][x.o()].Load()
					return expect(n >= int64(x.sz[x.o()]), "barrier left with %d of %d remote ranks entered", n, x.sz[x.o()])
				},
			}
		}},
		{"allgather", func(x *interX) interRun {
			n := func(g int) int { return 1 + g } // the groups send different counts
			recv := make([]int64, x.sz[x.o()]*n(x.o()))
			send := make([]int64, n(x.g))
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, n(x.g))); clear(recv) },
				call: func(f collForm) (*Request, error) {
					return formCall(f, func() error { return Allgather(x.c, send, recv) }, func() (*Request, error) { return Iallgather(x.c, send, recv) }, func() (*Request, error) { return AllgatherInit(x.c, send, recv) })
				},
				check: func(seed int) error {
					var want []int64
					for j := range x.sz[x.o()] {
						want = append(want, in(x.o(), j, seed, n(x.o()))...)
					}
					return same("allgather", recv, want)
				},
			}
		}},
		{"allgatherv", func(x *interX) interRun {
			var counts, displs []int
			at := 0
			for j := range x.sz[x.o()] {
				counts, displs = append(counts, vc(x.o(), j)), append(displs, at+1)
				at += 1 + vc(x.o(), j)
			}
			recv := make([]int64, at)
			send := make([]int64, vc(x.g, x.r))
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, len(send))); clear(recv) },
				call: func(f collForm) (*Request, error) {
					return formCall(f, func() error { return Allgatherv(x.c, send, recv, counts, displs) }, func() (*Request, error) { return Iallgatherv(x.c, send, recv, counts, displs) }, func() (*Request, error) { return AllgathervInit(x.c, send, recv, counts, displs) })
				},
				check: func(seed int) error {
					want := make([]int64, len(recv))
					for j := range counts {
						copy(want[displs[j]:], in(x.o(), j, seed, counts[j]))
					}
					return same("allgatherv", recv, want)
				},
			}
		}},
		{"alltoall", func(x *interX) interRun {
			n := func(g int) int { return 1 + g }
			send, recv := make([]int64, x.sz[x.o()]*n(x.g)), make([]int64, x.sz[x.o()]*n(x.o()))
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, len(send))); clear(recv) },
				call: func(f collForm) (*Request, error) {
					return formCall(f, func() error { return Alltoall(x.c, send, recv) }, func() (*Request, error) { return Ialltoall(x.c, send, recv) }, func() (*Request, error) { return AlltoallInit(x.c, send, recv) })
				},
				check: func(seed int) error {
					var want []int64
					for j := range x.sz[x.o()] {
						b := n(x.o())
						want = append(want, in(x.o(), j, seed, x.sz[x.g]*b)[x.r*b:(x.r+1)*b]...)
					}
					return same("alltoall", recv, want)
				},
			}
		}},
		{"alltoallv", func(x *interX) interRun {
			cnt := func(g, r, j int) int { return (r + 2*j + g) % 3 } // from rank r of g to rank j of the other
			layout := func(g, r int) (counts, displs []int, total int) {
				for j := range x.sz[1-g] {
					counts, displs = append(counts, cnt(g, r, j)), append(displs, total)
					total += cnt(g, r, j)
				}
				return
			}
			sc, sd, st := layout(x.g, x.r)
			var rc, rd []int
			rt := 0
			for j := range x.sz[x.o()] {
				rc, rd = append(rc, cnt(x.o(), j, x.r)), append(rd, rt)
				rt += cnt(x.o(), j, x.r)
			}
			send, recv := make([]int64, st), make([]int64, rt)
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, st)); clear(recv) },
				call: func(f collForm) (*Request, error) {
					return formCall(f, func() error { return Alltoallv(x.c, send, sc, sd, recv, rc, rd) }, func() (*Request, error) { return Ialltoallv(x.c, send, sc, sd, recv, rc, rd) }, func() (*Request, error) { return AlltoallvInit(x.c, send, sc, sd, recv, rc, rd) })
				},
				check: func(seed int) error {
					var want []int64
					for j := range x.sz[x.o()] {
						_, d, t := layout(x.o(), j)
						want = append(want, in(x.o(), j, seed, t)[d[x.r]:d[x.r]+cnt(x.o(), j, x.r)]...)
					}
					return same("alltoallv", recv, want)
				},
			}
		}},
		{"allreduce", func(x *interX) interRun {
			const n = 4
			recv := make([]int64, n)
			send := make([]int64, n)
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, n)); clear(recv) },
				call: func(f collForm) (*Request, error) {
					return formCall(f, func() error { return Allreduce(x.c, send, recv, Sum) }, func() (*Request, error) { return Iallreduce(x.c, send, recv, Sum) }, func() (*Request, error) { return AllreduceInit(x.c, send, recv, Sum) })
				},
				check: func(seed int) error { return same("allreduce", recv, sumOf(x.o(), x.sz[x.o()], seed, n)) },
			}
		}},
		{"reduce_scatter_block", func(x *interX) interRun {
			total := x.sz[0] * x.sz[1] // the same vector length in both groups
			rc := total / x.sz[x.g]
			recv := make([]int64, rc)
			send := make([]int64, total)
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, total)); clear(recv) },
				call: func(f collForm) (*Request, error) {
					return formCall(f, func() error { return ReduceScatterBlock(x.c, send, recv, Sum) }, func() (*Request, error) { return IreduceScatterBlock(x.c, send, recv, Sum) }, func() (*Request, error) { return ReduceScatterBlockInit(x.c, send, recv, Sum) })
				},
				check: func(seed int) error {
					return same("reduce_scatter_block", recv, sumOf(x.o(), x.sz[x.o()], seed, total)[x.r*rc:(x.r+1)*rc])
				},
			}
		}},
		{"reduce_scatter", func(x *interX) interRun {
			const total = 7
			counts := make([]int, x.sz[x.g])
			for i := range total {
				counts[(i*5+x.g)%len(counts)]++
			}
			at := 0
			for _, c := range counts[:x.r] {
				at += c
			}
			recv := make([]int64, counts[x.r])
			send := make([]int64, total)
			return interRun{
				fill: func(seed int) { copy(send, in(x.g, x.r, seed, total)); clear(recv) },
				call: func(f collForm) (*Request, error) {
					return formCall(f, func() error { return ReduceScatter(x.c, send, recv, counts, Sum) }, func() (*Request, error) { return IreduceScatter(x.c, send, recv, counts, Sum) }, func() (*Request, error) { return ReduceScatterInit(x.c, send, recv, counts, Sum) })
				},
				check: func(seed int) error {
					return same("reduce_scatter", recv, sumOf(x.o(), x.sz[x.o()], seed, total)[at:at+len(recv)])
				},
			}
		}},
	}
}

// interEntered counts, per seed and group, the ranks that entered the
// barrier case (the barrier test's reference).
var interEntered [3][2]atomic.Int64

// sumOf is the elementwise sum of group g's inputs (size ranks).
func sumOf(g, size, seed, n int) []int64 {
	out := make([]int64, n)
	for r := range size {
		for i, v := range in(g, r, seed, n) {
			out[i] += v
		}
	}
	return out
}

// Every intercommunicator collective, in every form, for every split and
// roots at both ends of both groups, against a naive sequential reference.
func TestIntercommCollectives(t *testing.T) {
	for _, sz := range interSplits {
		t.Run(fmt.Sprintf("%d+%d", sz[0], sz[1]), func(t *testing.T) {
			for i := range interEntered {
				interEntered[i][0].Store(0)
				interEntered[i][1].Store(0)
			}
			world(t, sz[0]+sz[1], func(w *Comm) error {
				x, err := newInter(w, sz[0])
				if err != nil {
					return err
				}
				for _, form := range []collForm{blocking, nonblocking, persistent} {
					roots := [][2]int{{0, 0}, {1, sz[1] - 1}, {0, sz[0] - 1}, {1, 0}}
					for ri, root := range roots {
						for _, cs := range interCases(root[0], root[1]) {
							if ri > 0 && !slices.Contains([]string{"bcast", "gather", "gatherv", "scatter", "scatterv", "reduce"}, cs.name) {
								continue // unrooted: once per form
							}
							if cs.name == "barrier" && form != blocking {
								continue // the entry counters are per seed, not per form
							}
							if err := runInter(cs.make(x), form); err != nil {
								return fmt.Errorf("%s form %d root %v: %w", cs.name, form, root, err)
							}
						}
					}
				}
				return x.c.Free()
			})
		})
	}
}

// Point-to-point on an intercommunicator addresses the remote group, with
// AnySource too; statuses name remote ranks.
func TestIntercommP2P(t *testing.T) {
	for _, sz := range interSplits {
		world(t, sz[0]+sz[1], func(w *Comm) error {
			x, err := newInter(w, sz[0])
			if err != nil {
				return err
			}
			// every rank of A sends to every rank of B, which receives from AnySource and answers
			if x.g == 0 {
				for j := range x.sz[1] {
					if err := Send(x.c, []int64{int64(x.r)}, j, 3); err != nil {
						return err
					}
				}
				for range x.sz[1] {
					got := []int64{0}
					st, err := Recv(x.c, got, AnySource, 4)
					if err != nil {
						return err
					}
					if err := expect(got[0] == int64(100*st.Source+x.r), "A %d got %d from %d", x.r, got[0], st.Source); err != nil {
						return err
					}
				}
			} else {
				seen := make([]bool, x.sz[0])
				for range x.sz[0] {
					got := []int64{0}
					st, err := Recv(x.c, got, AnySource, 3)
					if err != nil {
						return err
					}
					if err := expect(got[0] == int64(st.Source) && !seen[st.Source], "B got %d from %d", got[0], st.Source); err != nil {
						return err
					}
					seen[st.Source] = true
					if err := Send(x.c, []int64{int64(100*x.r + st.Source)}, st.Source, 4); err != nil {
						return err
					}
				}
			}
			err = expectErr(Send(x.c, []int64{1}, x.sz[x.o()], 0), ErrRank, "send past the remote group")
			return errors.Join(err, x.c.Free())
		})
	}
}

// Merge orders the low group first; equal flags put the group holding the
// lower world rank first. The merged communicator works.
func TestIntercommMerge(t *testing.T) {
	for _, sz := range [][2]int{{1, 3}, {3, 2}, {2, 2}} {
		for _, flags := range [][2]bool{{false, true}, {true, false}, {true, true}, {false, false}} {
			world(t, sz[0]+sz[1], func(w *Comm) error {
				x, err := newInter(w, sz[0])
				if err != nil {
					return err
				}
				m, err := x.c.IntercommMerge(flags[x.g])
				if err != nil {
					return err
				}
				want := w.Rank() // A first
				if flags[0] && !flags[1] {
					want = (w.Rank() + sz[1]) % w.Size() // B first
				}
				sum := []int64{0}
				err = Allreduce(m, []int64{int64(m.Rank())}, sum, Sum)
				n := int64(w.Size())
				return errors.Join(err, expect(m.Rank() == want && m.Size() == w.Size() && !m.TestInter(), "merged rank %d of %d, want %d", m.Rank(), m.Size(), want),
					expect(sum[0] == n*(n-1)/2, "allreduce over the merged comm: %d", sum[0]), m.Free(), x.c.Free())
			})
		}
	}
	// the ranks of a group must agree on high
	world(t, 4, func(w *Comm) error {
		x, err := newInter(w, 2)
		if err != nil {
			return err
		}
		_, err = x.c.IntercommMerge(x.g == 0 && x.r == 1)
		return errors.Join(expectErr(err, ErrArg, "mixed high flags"), x.c.Free())
	})
}

// Split on an intercommunicator gives intercommunicators of the color's
// ranks in both groups, ordered by key; a color missing on the other side
// gives nil. Dup, Compare, RemoteGroup and Free work on them.
func TestIntercommSplitDup(t *testing.T) {
	world(t, 7, func(w *Comm) error {
		x, err := newInter(w, 4) // A: 4 ranks, colors 0 1 2 0 (2 only in A); B: 3 ranks, colors 0 1 0
		if err != nil {
			return err
		}
		color := x.r % 3
		if x.g == 1 {
			color = x.r % 2
		}
		s, err := x.c.Split(color, -x.r) // reversed order
		if err != nil {
			return err
		}
		if color == 2 {
			return errors.Join(expect(s == nil, "color 2 has no remote ranks but got a communicator"), x.c.Free())
		}
		count := func(g, c int) (n int) {
			for r := range x.sz[g] {
				if (g == 0 && r%3 == c) || (g == 1 && r%2 == c) {
					n++
				}
			}
			return n
		}
		errs := []error{expect(s.TestInter() && s.Size() == count(x.g, color) && s.RemoteSize() == count(x.o(), color),
			"split: size %d remote %d", s.Size(), s.RemoteSize())}
		// reversed keys: the highest old rank is rank 0
		errs = append(errs, expect(s.Rank() == s.Size()-1-x.r/max(1, 3-x.g), "split rank %d for old rank %d", s.Rank(), x.r))
		sum := []int64{0}
		errs = append(errs, Allreduce(s, []int64{1}, sum, Sum), expect(sum[0] == int64(s.RemoteSize()), "allreduce over the split: %d", sum[0]))
		d, err := s.Dup()
		if err != nil {
			return err
		}
		cmp, err := Compare(s, d)
		errs = append(errs, err, expect(cmp == Congruent, "dup compares %v", cmp))
		cmp, err = Compare(s, w)
		errs = append(errs, err, expect(cmp == Unequal, "intercomm vs world compares %v", cmp))
		rg, err := d.RemoteGroup()
		errs = append(errs, err, expect(rg.Size() == d.RemoteSize() && rg.Rank() == Undefined, "remote group of %d, my rank %d", rg.Size(), rg.Rank()))
		errs = append(errs, Barrier(d), d.Free(), s.Free(), x.c.Free())
		errs = append(errs, expectErr(Barrier(d), ErrComm, "barrier on a freed intercomm"))
		_, err = w.RemoteGroup()
		errs = append(errs, expectErr(err, ErrComm, "remote group of an intracomm"))
		return errors.Join(errs...)
	})
}

// Misuse is an error on every rank, never a hang: InPlace, bad roots, Scan,
// a bad local leader, leaders with different tags, a remote leader inside
// the local group.
func TestIntercommMisuse(t *testing.T) {
	world(t, 5, func(w *Comm) error {
		x, err := newInter(w, 2)
		if err != nil {
			return err
		}
		buf := make([]int64, 6)
		errs := []error{
			expectErr(Allreduce(x.c, InPlace[int64](), buf, Sum), ErrArg, "in place allreduce"),
			expectErr(Allgather(x.c, InPlace[int64](), buf), ErrArg, "in place allgather"),
			expectErr(Bcast(x.c, buf, 7), ErrRoot, "bcast root past the remote group"),
			expectErr(Reduce(x.c, buf, buf, Sum, Undefined), ErrRoot, "reduce root Undefined"),
			expectErr(Scan(x.c, buf, buf, Sum), ErrComm, "scan on an intercomm"),
			expectErr(Allgather(x.c, buf[:1], buf[:5]), ErrCount, "allgather receive not a whole number of blocks"),
		}
		// still in step after the failed calls
		errs = append(errs, Barrier(x.c))
		local, err := w.Split(x.g, 0)
		if err != nil {
			return err
		}
		_, err = IntercommCreate(local, 9, w, 0, 1)
		errs = append(errs, expectErr(err, ErrRank, "local leader past the group"))
		leader := []int{2, 0}[x.g]
		_, err = IntercommCreate(local, 0, w, leader, 10+x.g)
		errs = append(errs, expectErr(err, ErrArg, "leaders with different tags"))
		_, err = IntercommCreate(local, 0, w, w.Rank(), 1) // the remote leader is the leader itself
		errs = append(errs, expectErr(err, ErrRank, "remote leader in the local group"))
		_, err = IntercommCreate(x.c, 0, w, leader, 1)
		errs = append(errs, expectErr(err, ErrComm, "an intercomm as the local comm"))
		// and a good one still works after the failures
		y, err := IntercommCreate(local, 0, w, leader, 1)
		if err == nil {
			errs = append(errs, Barrier(y), y.Free())
		}
		return errors.Join(append(errs, err, local.Free(), x.c.Free())...)
	})
}

// A persistent intercommunicator collective allocates nothing per
// Start+Wait.
func TestIntercommPersistentAllocs(t *testing.T) {
	world(t, 8, func(w *Comm) error {
		x, err := newInter(w, 4)
		if err != nil {
			return err
		}
		send, recv, buf := []float64{1}, []float64{0}, []float64{2}
		ar, err := AllreduceInit(x.c, send, recv, Sum)
		if err != nil {
			return err
		}
		bc, err := BcastInit(x.c, buf, x.root(0, 0))
		if err != nil {
			return err
		}
		return errors.Join(noAllocs(w, 1000, "allreduce and bcast", ar, bc),
			expect(recv[0] == 4, "allreduce gave %v", recv[0]), ar.Free(), bc.Free(), x.c.Free())
	})
}

// Leaders other than rank 0 and a peer communicator other than the world
// work; counts the two groups disagree on fail on every rank of both
// groups instead of hanging.
func TestIntercommLeadersAndMismatch(t *testing.T) {
	world(t, 5, func(w *Comm) error {
		g := 0
		if w.Rank() >= 2 {
			g = 1
		}
		local, err := w.Split(g, 0)
		if err != nil {
			return err
		}
		peer, err := w.Dup()
		if err != nil {
			return err
		}
		remoteLeader := []int{4, 1}[g] // the other group's last rank
		c, err := IntercommCreate(local, local.Size()-1, peer, remoteLeader, 0)
		if err != nil {
			return err
		}
		sum := []int64{0}
		errs := []error{Allreduce(c, []int64{int64(w.Rank())}, sum, Sum)}
		errs = append(errs, expect(sum[0] == []int64{2 + 3 + 4, 0 + 1}[g], "allreduce across groups: %d", sum[0]))
		n := 2 + g // the groups disagree on the count
		err = Allreduce(c, make([]int64, n), make([]int64, n), Sum)
		errs = append(errs, expectErr(err, ErrArg, "allreduce with counts that differ between the groups"))
		return errors.Join(append(errs, c.Free(), peer.Free(), local.Free())...)
	})
}

// Alltoallw on an intercommunicator exchanges with every rank of the
// remote group: each rank sends remote rank q a block of q+1 int64s and
// receives remote rank p's block into column p of a matrix (a strided
// Vector type), every form, against the naive reference; in place is an
// error.
func TestIntercommAlltoallw(t *testing.T) {
	for _, sz := range interSplits {
		world(t, sz[0]+sz[1], func(w *Comm) error {
			x, err := newInter(w, sz[0])
			if err != nil {
				return err
			}
			defer x.c.Free()
			nr := x.sz[x.o()] // remote ranks: matrix columns
			const rows = 4
			// the block for remote rank q: rows elements, tagged by sender and q
			send := make([]int64, nr*rows)
			sc, sd, st := make([]int, nr), make([]int, nr), make([]*Datatype, nr)
			for q := range nr {
				for i := range rows {
					send[q*rows+i] = int64(x.g)<<40 | int64(x.r)<<20 | int64(q)<<10 | int64(i)
				}
				sc[q], sd[q], st[q] = rows, q*rows*8, Int64
			}
			col, err := Vector(rows, 1, nr, Int64) // one column of a rows×nr matrix
			if err != nil {
				return err
			}
			if err := col.Commit(); err != nil {
				return err
			}
			defer col.Free()
			rc, rd, rt := make([]int, nr), make([]int, nr), make([]*Datatype, nr)
			for p := range nr {
				rc[p], rd[p], rt[p] = 1, p*8, col
			}
			for _, form := range []collForm{blocking, nonblocking, persistent} {
				recv := make([]int64, rows*nr)
				req, err := formCall(form,
					func() error { return Alltoallw(x.c, Bytes(send), sc, sd, st, Bytes(recv), rc, rd, rt) },
					func() (*Request, error) { return Ialltoallw(x.c, Bytes(send), sc, sd, st, Bytes(recv), rc, rd, rt) },
					func() (*Request, error) { return AlltoallwInit(x.c, Bytes(send), sc, sd, st, Bytes(recv), rc, rd, rt) })
				if err != nil {
					return fmt.Errorf("form %d: %w", form, err)
				}
				if req != nil {
					if form == persistent {
						if err := req.Start(); err != nil {
							return err
						}
					}
					if _, err := req.Wait(context.Background()); err != nil {
						return err
					}
					if err := req.Free(); err != nil {
						return err
					}
				}
				for p := range nr {
					for i := range rows {
						want := int64(x.o())<<40 | int64(p)<<20 | int64(x.r)<<10 | int64(i)
						if got := recv[i*nr+p]; got != want {
							return fmt.Errorf("form %d: row %d column %d: got %#x, want %#x", form, i, p, got, want)
						}
					}
				}
			}
			err = Alltoallw(x.c, InPlace[byte](), nil, nil, nil, make([]byte, 8*rows*nr), rc, rd, rt)
			if !errors.Is(err, ErrArg) {
				return fmt.Errorf("in place on an intercommunicator: got %v, want ErrArg", err)
			}
			return nil
		})
	}
}

// Intercommunicator collectives whose local phases pick the large-message
// algorithms (Rabenseifner's reduce): the second local phase must not
// post its receives before the first is through (both run on one tag), or
// a receive of the broadcast matched a message of the reduce (MPICH's
// coll/icallreduce: "received 65536 bytes, expected 131072").
func TestIntercommLargeCollectives(t *testing.T) {
	for _, sz := range [][2]int{{2, 2}, {3, 2}} {
		t.Run(fmt.Sprintf("%d+%d", sz[0], sz[1]), func(t *testing.T) {
			world(t, sz[0]+sz[1], func(w *Comm) error {
				x, err := newInter(w, sz[0])
				if err != nil {
					return err
				}
				for _, n := range []int{1, 4096, 16384, 65536} {
					send, recv := in(x.g, x.r, n, n), make([]int64, n)
					if err := Allreduce(x.c, send, recv, Sum); err != nil {
						return fmt.Errorf("allreduce of %d: %w", n, err)
					}
					if err := same(fmt.Sprintf("allreduce of %d", n), recv, sumOf(x.o(), x.sz[x.o()], n, n)); err != nil {
						return err
					}
					all := make([]int64, n*x.sz[x.o()])
					if err := Allgather(x.c, send, all); err != nil {
						return fmt.Errorf("allgather of %d: %w", n, err)
					}
					for r := range x.sz[x.o()] {
						if err := same(fmt.Sprintf("allgather of %d from %d", n, r), all[r*n:(r+1)*n], in(x.o(), r, n, n)); err != nil {
							return err
						}
					}
					// the reduced vector is as long in both groups
					total := n * x.sz[0] * x.sz[1]
					rc := total / x.sz[x.g]
					block := make([]int64, rc)
					if err := ReduceScatterBlock(x.c, in(x.g, x.r, n, total), block, Sum); err != nil {
						return fmt.Errorf("reduce_scatter_block of %d: %w", n, err)
					}
					want := sumOf(x.o(), x.sz[x.o()], n, total)[x.r*rc : (x.r+1)*rc]
					if err := same(fmt.Sprintf("reduce_scatter_block of %d", n), block, want); err != nil {
						return err
					}
				}
				return x.c.Free()
			})
		})
	}
}
