package coll_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
)

// Shared by allgather_test.go and alltoall_test.go: the all-to-all family's
// sweep, plus static checks the fabric cannot make (no two unordered steps
// touch the same bytes unless both only read; messages respect Segment).

var (
	a2aSizes  = []int{1, 2, 3, 4, 5, 7, 8, 11, 16}
	a2aCounts = []int{0, 1, 3, 7, 8, 9, 31, 33, 257}
	a2aSeeds  = []int{1, 2}
)

// a2aAlg returns the registered algorithm, failing the test if it is not
// listed by coll.Algorithms.
func a2aAlg(t *testing.T, c coll.Coll, name string) coll.Algorithm {
	t.Helper()
	for _, a := range coll.Algorithms(c) {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("%s algorithm %q not registered", c, name)
	return coll.Algorithm{}
}

// a2aCases is the sweep of one collective: every size × count × in place,
// then segmented cases with 1-, 4-, 8- and 16-byte elements (a 16-byte
// element under an 8-byte Segment must still travel whole; 12 bytes of
// 8-byte elements is one element).
func a2aCases(c coll.Coll) []colltest.Case {
	var cs []colltest.Case
	for _, n := range a2aSizes {
		for _, count := range a2aCounts {
			for _, inPlace := range []bool{false, true} {
				cs = append(cs, colltest.Case{Coll: c, Size: n, Count: count, InPlace: inPlace})
			}
		}
	}
	// colltest.Verify is quadratic in a plan's steps, so the many-piece
	// cases stay on small groups
	for _, inPlace := range []bool{false, true} {
		cs = append(cs, colltest.Case{Coll: c, Size: 2, Count: 257, InPlace: inPlace, Segment: 16})
		for _, n := range []int{1, 3, 5} {
			cs = append(cs,
				colltest.Case{Coll: c, Size: n, Count: 33, InPlace: inPlace, Segment: 8},
				colltest.Case{Coll: c, Size: n, Count: 31, InPlace: inPlace, Segment: 3, Type: op.Int8},
				colltest.Case{Coll: c, Size: n, Count: 9, InPlace: inPlace, Segment: 8, Type: op.LocInt64})
		}
		for _, n := range []int{3, 8, 11} {
			cs = append(cs,
				colltest.Case{Coll: c, Size: n, Count: 7, InPlace: inPlace, Segment: 12, Type: op.Int32},
				colltest.Case{Coll: c, Size: n, Count: 7, InPlace: inPlace, Segment: 12})
		}
	}
	return cs
}

// a2aSweep runs the algorithm over the collective's sweep with two seeds
// each, and checks every case's plans statically.
func a2aSweep(t *testing.T, c coll.Coll, name string) {
	t.Helper()
	alg := a2aAlg(t, c, name)
	for _, cs := range a2aCases(c) {
		for _, seed := range a2aSeeds {
			if err := a2aCheck(alg, cs, seed); err != nil {
				t.Fatal(err)
			}
		}
		if err := a2aStatic(alg, cs); err != nil {
			t.Fatalf("%s %s: %v", cs, name, err)
		}
	}
}

// a2aCheck is colltest.Check, except that a rank with nothing to do (an
// empty plan: count 0, or one rank in place) is verified as a plan with one
// no-op step, because colltest.Verify's topological sort reports an empty
// plan as a dependency cycle. Such cases run Exec's steps here.
func a2aCheck(alg coll.Algorithm, cs colltest.Case, seed int) error {
	args := cs.Args()
	plans := make([]*coll.Plan, len(args))
	anyEmpty := false
	for r := range args {
		p, err := coll.Build(alg, &args[r])
		if err != nil {
			return fmt.Errorf("%s rank %d: %w", cs, r, err)
		}
		plans[r] = p
		anyEmpty = anyEmpty || len(p.Steps) == 0
	}
	if !anyEmpty {
		return colltest.Check(alg, cs, seed)
	}
	verified := slices.Clone(plans)
	for r, p := range verified {
		if len(p.Steps) == 0 {
			b := coll.NewBuilder(nil, op.Invalid)
			b.Join()
			if verified[r], _ = b.Plan("empty"); verified[r] == nil {
				return errors.New("cannot build a one-step plan")
			}
		}
	}
	if err := colltest.Verify(verified); err != nil {
		return fmt.Errorf("%s %s: %w", cs, alg.Name, err)
	}
	send, recv := make([][]byte, len(args)), make([][]byte, len(args))
	for r := range args {
		send[r], recv[r] = colltest.Buffers(args, r, seed)
	}
	want, err := colltest.Reference(args, send, recv)
	if err != nil {
		return fmt.Errorf("%s: reference: %w", cs, err)
	}
	f := colltest.NewFabric(len(args))
	runs := make([]*coll.Run, len(args))
	for r, p := range plans {
		runs[r] = coll.NewRun(p, f.Transport(r), 7, nil)
		if err := runs[r].Bind(send[r], recv[r]); err != nil {
			return fmt.Errorf("%s rank %d: %w", cs, r, err)
		}
	}
	for r, run := range runs {
		if err := run.Start(); err != nil {
			return fmt.Errorf("%s rank %d: %w", cs, r, err)
		}
	}
	for r, run := range runs {
		if !run.Finished() || run.Err() != nil {
			return fmt.Errorf("%s %s rank %d: finished=%v, %v", cs, alg.Name, r, run.Finished(), run.Err())
		}
		if !bytes.Equal(recv[r], want[r]) {
			return fmt.Errorf("%s %s: rank %d's receive buffer differs from the reference", cs, alg.Name, r)
		}
	}
	return f.Pending()
}

// a2aStatic builds every rank's plan and checks it for hazards and for
// message sizes.
func a2aStatic(alg coll.Algorithm, cs colltest.Case) error {
	args := cs.Args()
	for r := range args {
		p, err := coll.Build(alg, &args[r])
		if err != nil {
			return err
		}
		if err := a2aSegments(p, &args[r]); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		if err := a2aHazards(p); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
	}
	return nil
}

// a2aSegments checks that every message is non-empty, whole elements, and
// no longer than Segment allows.
func a2aSegments(p *coll.Plan, a *coll.Args) error {
	limit := 0
	if a.Segment > 0 {
		limit = max(a.ElemSize, a.Segment/a.ElemSize*a.ElemSize)
	}
	for i, s := range p.Steps {
		if s.Kind != coll.StepSend && s.Kind != coll.StepRecv {
			continue
		}
		if s.A.Len <= 0 || s.A.Len%a.ElemSize != 0 || limit > 0 && s.A.Len > limit {
			return fmt.Errorf("step %d: %s of %d bytes (elements of %d, segment %d)", i, s.Kind, s.A.Len, a.ElemSize, a.Segment)
		}
	}
	return nil
}

// a2aHazards reports two steps that the executor may run concurrently (not
// ordered by dependencies) while one writes bytes the other reads or
// writes: a receive into a block a pending send still reads, say. The
// in-memory fabric delivers eagerly and cannot see these; a real transport
// would. Plans above 6000 steps are not checked (quadratic memory).
func a2aHazards(p *coll.Plan) error {
	n := len(p.Steps)
	if n > 6000 {
		return nil
	}
	words := (n + 63) / 64
	anc := make([]uint64, n*words) // anc[i*words:]: the steps i transitively depends on
	deg := make([]int32, n)
	var queue []int
	for i, s := range p.Steps {
		if deg[i] = s.NDeps; deg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, s := range p.Successors(i) {
			row, from := anc[int(s)*words:][:words], anc[i*words:][:words]
			for w := range row {
				row[w] |= from[w]
			}
			row[i/64] |= 1 << (i % 64)
			if deg[s]--; deg[s] == 0 {
				queue = append(queue, int(s))
			}
		}
	}
	ordered := func(i, j int) bool {
		return anc[i*words+j/64]&(1<<(j%64)) != 0 || anc[j*words+i/64]&(1<<(i%64)) != 0
	}
	type access struct {
		step  int
		ref   coll.Ref
		write bool
	}
	var acc []access
	for i, s := range p.Steps {
		switch s.Kind {
		case coll.StepSend:
			acc = append(acc, access{i, s.A, false})
		case coll.StepRecv:
			acc = append(acc, access{i, s.A, true})
		case coll.StepCopy, coll.StepReduce:
			if s.A.Buf == s.B.Buf && s.A.Off < s.B.Off+s.B.Len && s.B.Off < s.A.Off+s.A.Len {
				return fmt.Errorf("step %d: %s from %v into overlapping %v", i, s.Kind, s.A, s.B)
			}
			acc = append(acc, access{i, s.A, false}, access{i, s.B, true})
		}
	}
	acc = slices.DeleteFunc(acc, func(x access) bool { return x.ref.Len == 0 })
	sort.Slice(acc, func(i, j int) bool {
		if acc[i].ref.Buf != acc[j].ref.Buf {
			return acc[i].ref.Buf < acc[j].ref.Buf
		}
		return acc[i].ref.Off < acc[j].ref.Off
	})
	var open []access // accesses of the current buffer that may still overlap
	for _, x := range acc {
		open = slices.DeleteFunc(open, func(y access) bool {
			return y.ref.Buf != x.ref.Buf || y.ref.Off+y.ref.Len <= x.ref.Off
		})
		for _, y := range open {
			if (x.write || y.write) && x.step != y.step && !ordered(x.step, y.step) {
				return fmt.Errorf("steps %d (%s %v) and %d (%s %v) overlap and may run concurrently",
					y.step, p.Steps[y.step].Kind, y.ref, x.step, p.Steps[x.step].Kind, x.ref)
			}
		}
		open = append(open, x)
	}
	return nil
}

// a2aPersistent runs one set of Runs (one plan and one scratch area per
// rank) three times over one fabric, with fresh inputs each time, as a
// persistent collective does: a plan relying on scratch left over from the
// previous start, or on its initial contents, fails here.
func a2aPersistent(t *testing.T, alg coll.Algorithm, cs colltest.Case) {
	t.Helper()
	args := cs.Args()
	f := colltest.NewFabric(cs.Size)
	runs := make([]*coll.Run, cs.Size)
	for r := range args {
		p, err := coll.Build(alg, &args[r])
		if err != nil {
			t.Fatalf("%s: %v", cs, err)
		}
		runs[r] = coll.NewRun(p, f.Transport(r), 3, nil)
	}
	for seed := 10; seed < 13; seed++ {
		send, recv := make([][]byte, cs.Size), make([][]byte, cs.Size)
		for r := range args {
			send[r], recv[r] = colltest.Buffers(args, r, seed)
		}
		want, err := colltest.Reference(args, send, recv)
		if err != nil {
			t.Fatalf("%s: %v", cs, err)
		}
		for r, run := range runs {
			if err := run.Bind(send[r], recv[r]); err != nil {
				t.Fatalf("%s rank %d: %v", cs, r, err)
			}
		}
		for r, run := range runs {
			if err := run.Start(); err != nil {
				t.Fatalf("%s rank %d: %v", cs, r, err)
			}
		}
		for r, run := range runs {
			if !run.Finished() || run.Err() != nil {
				t.Fatalf("%s start %d rank %d: finished=%v err=%v", cs, seed, r, run.Finished(), run.Err())
			}
			if !bytes.Equal(recv[r], want[r]) {
				t.Fatalf("%s start %d rank %d: wrong result", cs, seed, r)
			}
		}
		if err := f.Pending(); err != nil {
			t.Fatalf("%s start %d: %v", cs, seed, err)
		}
	}
}

func TestAllgatherRing(t *testing.T) {
	t.Parallel()
	a2aSweep(t, coll.Allgather, "ring")
}

func TestAllgathervRing(t *testing.T) {
	t.Parallel()
	a2aSweep(t, coll.Allgatherv, "ring")
}

func TestAllgatherBruck(t *testing.T) {
	t.Parallel()
	a2aSweep(t, coll.Allgather, "bruck")
}

func TestAllgatherRecursiveDoubling(t *testing.T) {
	t.Parallel()
	a2aSweep(t, coll.Allgather, "recursive_doubling")
}

// TestAllgatherPersistent restarts each algorithm's runs with new inputs.
func TestAllgatherPersistent(t *testing.T) {
	t.Parallel()
	for _, x := range []struct {
		c    coll.Coll
		name string
	}{{coll.Allgather, "ring"}, {coll.Allgather, "bruck"}, {coll.Allgather, "recursive_doubling"}, {coll.Allgatherv, "ring"}} {
		alg := a2aAlg(t, x.c, x.name)
		for _, n := range []int{1, 5, 6, 8} {
			for _, inPlace := range []bool{false, true} {
				a2aPersistent(t, alg, colltest.Case{Coll: x.c, Size: n, Count: 9, InPlace: inPlace})
				a2aPersistent(t, alg, colltest.Case{Coll: x.c, Size: n, Count: 33, InPlace: inPlace, Segment: 16})
			}
		}
	}
}

// TestAllgatherSelect checks the registrations: every algorithm is listed,
// none has restrictions (each handles any size and in place), a name that
// is not registered is ErrAlgorithm, and the default rules pick one of
// them for every size and message size.
func TestAllgatherSelect(t *testing.T) {
	t.Parallel()
	a2aSelect(t, coll.Allgather, []string{"bruck", "recursive_doubling", "ring"})
	a2aSelect(t, coll.Allgatherv, []string{"ring"})
}

func a2aSelect(t *testing.T, c coll.Coll, names []string) {
	t.Helper()
	for _, name := range names {
		if alg := a2aAlg(t, c, name); alg.Requires != 0 || alg.Desc == "" {
			t.Errorf("%s %s: Requires %b, Desc %q", c, name, alg.Requires, alg.Desc)
		}
	}
	for _, n := range []int{1, 2, 3, 6, 16, 17} {
		for _, count := range []int{0, 1, 100, 100000} {
			for _, inPlace := range []bool{false, true} {
				args := colltest.Case{Coll: c, Size: n, Count: count, InPlace: inPlace}.Args()
				a := args[n-1]
				for _, name := range names {
					if _, err := coll.Select(&a, name); err != nil {
						t.Errorf("%s n=%d count=%d in place=%v: forcing %s: %v", c, n, count, inPlace, name, err)
					}
				}
				alg, err := coll.Select(&a, "")
				if err != nil || !slices.Contains(names, alg.Name) {
					t.Errorf("%s n=%d count=%d: default %q, %v", c, n, count, alg.Name, err)
				}
				if _, err := coll.Select(&a, "no_such_algorithm"); !errors.Is(err, coll.ErrAlgorithm) {
					t.Errorf("%s: forcing an unknown algorithm: %v", c, err)
				}
			}
		}
	}
}
