package coll_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
	"github.com/stretchr/testify/require"
)

// maskedFabric is a fabric of one collective call that matches as the
// real transports do (coll.Transport): a receive takes the first message
// from its peer whatever the signature bits, and fails with ErrMismatch
// if they differ from its own. A rank whose run fails with ErrMismatch
// tells the others (Abandon), which the test delivers as Run.Abort once
// every run has started.
type maskedFabric struct {
	queues  map[[2]int]*maskedQueue // [src, dst]
	notices []int                   // ranks that abandoned with ErrMismatch
}

type maskedQueue struct {
	msgs  []maskedMsg
	recvs []maskedRecv
}

type maskedMsg struct {
	tag  uint32
	data []byte
}

type maskedRecv struct {
	tag uint32
	p   []byte
	c   coll.Completer
	id  int32
}

func (f *maskedFabric) queue(src, dst int) *maskedQueue {
	q := f.queues[[2]int{src, dst}]
	if q == nil {
		q = &maskedQueue{}
		f.queues[[2]int{src, dst}] = q
	}
	return q
}

func maskedDeliver(r maskedRecv, m maskedMsg) {
	switch {
	case r.tag != m.tag:
		r.c.Complete(r.id, 0, fmt.Errorf("tag %#x where %#x was expected: %w", m.tag, r.tag, coll.ErrMismatch))
	case len(m.data) > len(r.p):
		r.c.Complete(r.id, 0, fmt.Errorf("%d bytes into %d: %w", len(m.data), len(r.p), coll.ErrMismatch))
	default:
		r.c.Complete(r.id, copy(r.p, m.data), nil)
	}
}

type maskedEndpoint struct {
	f          *maskedFabric
	rank, size int
}

func (e maskedEndpoint) Rank() int { return e.rank }
func (e maskedEndpoint) Size() int { return e.size }

func (e maskedEndpoint) Send(peer int, tag uint32, p []byte, c coll.Completer, id int32) error {
	q := e.f.queue(e.rank, peer)
	m := maskedMsg{tag, append([]byte(nil), p...)}
	if len(q.recvs) > 0 {
		r := q.recvs[0]
		q.recvs = q.recvs[1:]
		maskedDeliver(r, m)
	} else {
		q.msgs = append(q.msgs, m)
	}
	c.Complete(id, len(p), nil)
	return nil
}

func (e maskedEndpoint) Recv(peer int, tag uint32, p []byte, c coll.Completer, id int32) error {
	q := e.f.queue(peer, e.rank)
	r := maskedRecv{tag, p, c, id}
	if len(q.msgs) > 0 {
		m := q.msgs[0]
		q.msgs = q.msgs[1:]
		maskedDeliver(r, m)
		return nil
	}
	q.recvs = append(q.recvs, r)
	return nil
}

func (e maskedEndpoint) Abandon(_ uint32, err error) {
	for k, q := range e.f.queues {
		if k[1] != e.rank {
			continue
		}
		recvs := q.recvs
		q.recvs = nil
		for _, r := range recvs {
			r.c.Complete(r.id, 0, err)
		}
	}
	if errors.Is(err, coll.ErrMismatch) {
		e.f.notices = append(e.f.notices, e.rank)
	}
}

// runMasked runs rank r's call args[r] of alg on a maskedFabric, tagged
// with each call's own signature, and returns each rank's outcome:
// whether its run finished, its error, and whether any rank found a
// mismatch itself (before any notice).
func runMasked(t *testing.T, alg coll.Algorithm, args []coll.Args) (finished []bool, errs []error, found bool) {
	t.Helper()
	n := len(args)
	f := &maskedFabric{queues: map[[2]int]*maskedQueue{}}
	runs := make([]*coll.Run, n)
	for r := range args {
		p, err := coll.Build(alg, &args[r])
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		runs[r] = coll.NewRun(p, maskedEndpoint{f, r, n}, coll.Tag(1, coll.Signature(&args[r], alg.Name)), nil)
		if err := runs[r].Bind(make([]byte, p.Need[coll.BufSend]), make([]byte, p.Need[coll.BufRecv])); err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for r, run := range runs {
		if err := run.Start(); err != nil {
			t.Fatalf("rank %d start: %v", r, err)
		}
	}
	found = len(f.notices) > 0
	told := make([]bool, n)
	for len(f.notices) > 0 {
		from := f.notices[0]
		f.notices = f.notices[1:]
		if told[from] {
			continue
		}
		told[from] = true
		for r, run := range runs {
			if r != from {
				run.Abort(fmt.Errorf("rank %d told: %w", from, coll.ErrMismatch))
			}
		}
	}
	finished, errs = make([]bool, n), make([]error, n)
	for r, run := range runs {
		finished[r], errs[r] = run.Finished(), run.Err()
	}
	return finished, errs, found
}

// TestRootedMismatchFound is the agreement ring's proof (agree.go) run
// exhaustively on small worlds: for every rooted algorithm and every way
// the ranks may pick roots (and, on 2 and 3 ranks, counts, 0 among them),
// a call whose ranks disagree is found by some rank on its own, so every
// rank ends (with the notices) instead of hanging, and a call whose ranks
// agree completes. It covers the data-led edge (Algorithm.DataLeads),
// where two ranks that each name the other as root must still meet.
func TestRootedMismatchFound(t *testing.T) {
	for _, ca := range []collAlg{
		{coll.Bcast, "binomial"}, {coll.Bcast, "scatter_allgather"},
		{coll.Gather, "binomial"}, {coll.Scatter, "binomial"}, {coll.Reduce, "binomial"},
	} {
		alg := findAlg(t, ca)
		for n := 2; n <= 5; n++ {
			counts := []int{1}
			if n <= 3 {
				counts = []int{0, 1, 3}
			}
			choices := n * len(counts) // root × count per rank
			total := 1
			for range n {
				total *= choices
			}
			args := make([]coll.Args, n)
			for k := range total {
				agree := true
				for r, v := 0, k; r < n; r, v = r+1, v/choices {
					c := v % choices
					args[r] = coll.Args{Coll: ca.coll, Rank: r, Size: n, Root: c % n, Count: counts[c/n], ElemSize: 8, Type: op.Int64}
					if ca.coll == coll.Reduce {
						args[r].Op = op.Sum
					}
					agree = agree && args[r].Root == args[0].Root && args[r].Count == args[0].Count
				}
				finished, errs, found := runMasked(t, alg, args)
				what := fmt.Sprintf("%s/%s n=%d calls %v", ca.coll, ca.name, n, rootsCounts(args))
				for r := range n {
					if !finished[r] {
						t.Fatalf("%s: rank %d hangs (errors %v)", what, r, errs)
					}
				}
				if agree {
					for r, err := range errs {
						if err != nil {
							t.Fatalf("%s: rank %d: %v", what, r, err)
						}
					}
				} else if !found {
					t.Fatalf("%s: no rank found the mismatch (errors %v)", what, errs)
				}
			}
		}
	}
}

func findAlg(t *testing.T, ca collAlg) coll.Algorithm {
	t.Helper()
	for _, a := range coll.Algorithms(ca.coll) {
		if a.Name == ca.name {
			return a
		}
	}
	t.Fatalf("%s has no algorithm %s", ca.coll, ca.name)
	return coll.Algorithm{}
}

func rootsCounts(args []coll.Args) [][2]int {
	out := make([][2]int, len(args))
	for r, a := range args {
		out[r] = [2]int{a.Root, a.Count}
	}
	return out
}

// firstOf is a non-commutative op: it leaves inout as it is.
var firstOf = op.New("first", false, func(in, inout []int64) {})

// TestDataLeads checks the shape Algorithm.DataLeads and DataEnds promise
// wherever they hold: on the edge the data opens (the root to the next
// rank, or the rank before the root to the root), the sender's first
// message to the receiver is data it sends waiting for nothing, and the
// receiver's first receive from the sender one that waits for nothing.
func TestDataLeads(t *testing.T) {
	for c := range coll.NumColls {
		for _, alg := range coll.Algorithms(c) {
			for _, edge := range []struct {
				name  string
				holds func(*coll.Args) bool
				from  func(root, n int) int // the edge's sender; the receiver is the next rank
			}{
				{"DataLeads", alg.DataLeads, func(root, n int) int { return root }},
				{"DataEnds", alg.DataEnds, func(root, n int) int { return (root + n - 1) % n }},
			} {
				if edge.holds == nil {
					continue
				}
				for n := 2; n <= 9; n++ {
					for root := range n {
						for _, count := range []int{0, 1, 9, 100} {
							for _, v := range []struct {
								seg int
								op  *op.Op
							}{{0, op.Sum}, {8, op.Sum}, {24, op.Sum}, {0, firstOf}, {8, firstOf}} {
								seg := v.seg
								a := coll.Args{Coll: c, Size: n, Root: root, Count: count, ElemSize: 8, Type: op.Int64, Segment: seg}
								if c == coll.Reduce {
									a.Op = v.op
								} else if v.op != op.Sum {
									continue
								}
								if !edge.holds(&a) {
									continue
								}
								from := edge.from(root, n)
								to := (from + 1) % n
								for _, end := range []struct {
									rank, peer int
									send       bool
								}{{from, to, true}, {to, from, false}} {
									a.Rank = end.rank
									p, err := coll.Build(alg, &a)
									if err != nil {
										t.Fatal(err)
									}
									first := -1
									for i, s := range p.Steps {
										send := s.Kind == coll.StepSend
										recv := s.Kind == coll.StepRecv || s.Kind == coll.StepRecvReduce
										if int(s.Peer) == end.peer && (send && end.send || recv && !end.send) {
											first = i
											break
										}
									}
									if first < 0 || p.Steps[first].NDeps != 0 || p.Steps[first].A.Len == 0 {
										t.Fatalf("%s %s n=%d root %d count %d segment %d: rank %d's first transfer with %d (send %v) is step %d, not one of data waiting for nothing (%+v)",
											p.Name, edge.name, n, root, count, seg, end.rank, end.peer, end.send, first, p.Steps)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// A token receive that no step waits for trails: a Bcast root's run is
// settled once its data has gone, before the other rank sends its token,
// and finishes when the token comes; a token that shows a disagreement
// fails the settled run. A plan without trailing steps is never settled
// before it finishes.
func TestTrailingTokenSettles(t *testing.T) {
	bcast := findAlg(t, collAlg{coll.Bcast, "binomial"})
	args := func(root1 int) []coll.Args {
		return []coll.Args{
			{Coll: coll.Bcast, Rank: 0, Size: 2, Root: 0, Count: 1, ElemSize: 8, Type: op.Int64},
			{Coll: coll.Bcast, Rank: 1, Size: 2, Root: root1, Count: 1, ElemSize: 8, Type: op.Int64},
		}
	}
	for _, tc := range []struct {
		name  string
		root1 int
	}{{"agree", 0}, {"disagree", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &maskedFabric{queues: map[[2]int]*maskedQueue{}}
			a := args(tc.root1)
			runs := make([]*coll.Run, 2)
			for r := range a {
				runs[r] = maskedRun(t, f, bcast, &a[r])
			}
			require.NoError(t, runs[0].Start())
			require.True(t, runs[0].Settled(), "the root's data has gone: only its token receive is left")
			require.False(t, runs[0].Finished())
			require.NoError(t, runs[1].Start())
			require.True(t, runs[0].Finished())
			if tc.root1 == 0 {
				require.NoError(t, runs[0].Err())
				require.True(t, runs[1].Finished())
				require.NoError(t, runs[1].Err())
			} else {
				require.ErrorIs(t, runs[0].Err(), coll.ErrMismatch, "rank 1's data met rank 0's token receive")
			}
		})
	}
	allreduce := findAlg(t, collAlg{coll.Allreduce, "recursive_doubling"})
	a := coll.Args{Coll: coll.Allreduce, Rank: 0, Size: 2, Count: 1, ElemSize: 8, Type: op.Int64, Op: op.Sum}
	run := maskedRun(t, &maskedFabric{queues: map[[2]int]*maskedQueue{}}, allreduce, &a)
	require.NoError(t, run.Start())
	require.False(t, run.Settled(), "an allreduce waits for its peer's data")
}

// maskedRun is a run of alg for a's rank (of 2) on f, its buffers bound.
func maskedRun(t *testing.T, f *maskedFabric, alg coll.Algorithm, a *coll.Args) *coll.Run {
	t.Helper()
	p, err := coll.Build(alg, a)
	require.NoError(t, err)
	run := coll.NewRun(p, maskedEndpoint{f, a.Rank, 2}, coll.Tag(1, coll.Signature(a, alg.Name)), nil)
	require.NoError(t, run.Bind(make([]byte, p.Need[coll.BufSend]), make([]byte, p.Need[coll.BufRecv])))
	return run
}

// AbortHeld fails a run but leaves the withdrawal of its transfers to
// the caller, who holds a lock the withdrawal may need (a link it finds
// lost fails the communicator's collectives under that lock): nothing is
// withdrawn inside the call, and the run ends only once the caller runs
// the withdrawal. On a run that has ended, it leaves nothing to run and
// fails the next start.
func TestAbortHeldLeavesWithdrawal(t *testing.T) {
	bcast := findAlg(t, collAlg{coll.Bcast, "binomial"})
	a := coll.Args{Coll: coll.Bcast, Rank: 0, Size: 2, Root: 0, Count: 1, ElemSize: 8, Type: op.Int64}
	f := &maskedFabric{queues: map[[2]int]*maskedQueue{}}
	run := maskedRun(t, f, bcast, &a)
	require.NoError(t, run.Start())
	require.False(t, run.Finished(), "the root waits for rank 1's token")
	pending := func() int {
		n := 0
		for _, q := range f.queues {
			n += len(q.recvs)
		}
		return n
	}
	require.Equal(t, 1, pending())

	boom := errors.New("a member failed")
	late, later := run.AbortHeld(boom)
	require.False(t, late)
	require.Equal(t, 1, pending(), "AbortHeld withdrew the token receive itself")
	require.False(t, run.Finished(), "the run ended before its transfer was withdrawn")
	later.Run()
	require.Zero(t, pending())
	require.True(t, run.Finished())
	require.ErrorIs(t, run.Err(), boom)

	late, later = run.AbortHeld(boom)
	require.False(t, late, "the run had failed: the abort is not late for it")
	later.Run() // nothing to withdraw: a no-op
	require.NoError(t, run.Start())
	require.True(t, run.Finished())
	require.ErrorIs(t, run.Err(), boom, "the abort of an ended run fails its next start")
}
