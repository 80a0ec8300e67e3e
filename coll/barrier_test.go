package coll_test

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
)

var barrierSizes = []int{1, 2, 3, 4, 5, 7, 8, 11, 16, 17, 33, 64}

// TestBarrierDissemination checks the plans statically (colltest.CheckStatic:
// a barrier's messages are empty; ⌈log2 n⌉ of them per rank) and runs them
// against the reference.
func TestBarrierDissemination(t *testing.T) {
	alg := algorithm(t, coll.Barrier, "dissemination")
	for _, n := range barrierSizes {
		cs := colltest.Case{Coll: coll.Barrier, Size: n}
		for _, seed := range sweepSeeds {
			if err := colltest.Check(alg, cs, seed); err != nil {
				t.Fatal(err)
			}
		}
		plans, err := colltest.CheckStatic(alg, cs.Args())
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		for r, p := range plans {
			sends, recvs := 0, 0
			for _, s := range p.Steps {
				switch s.Kind {
				case coll.StepSend:
					sends++
				case coll.StepRecv:
					recvs++
				}
			}
			if rounds := bits.Len(uint(n - 1)); sends != rounds || recvs != rounds || p.Scratch != 0 {
				t.Fatalf("n=%d rank %d: %d sends, %d receives, %d bytes of scratch; want %d, %d, 0", n, r, sends, recvs, p.Scratch, rounds, rounds)
			}
		}
	}
}

// TestBarrierTree checks the tree barrier's plans statically and against
// the reference: 2(n-1) empty messages in all, no scratch.
func TestBarrierTree(t *testing.T) {
	alg := algorithm(t, coll.Barrier, "tree")
	for _, n := range barrierSizes {
		cs := colltest.Case{Coll: coll.Barrier, Size: n}
		for _, seed := range sweepSeeds {
			if err := colltest.Check(alg, cs, seed); err != nil {
				t.Fatal(err)
			}
		}
		plans, err := colltest.CheckStatic(alg, cs.Args())
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		sends := 0
		for _, p := range plans {
			for _, s := range p.Steps {
				if s.Kind == coll.StepSend {
					sends++
				}
			}
			if p.Scratch != 0 {
				t.Fatalf("n=%d: %d bytes of scratch", n, p.Scratch)
			}
		}
		if sends != 2*(n-1) {
			t.Fatalf("n=%d: %d messages, want %d", n, sends, 2*(n-1))
		}
	}
}

// TestBarrierHolds checks what makes a barrier one: with every rank but j
// started, no rank may finish (the fabric delivers everything it can at
// once, so a rank that did not need j would be done); starting j then
// completes every rank. For every j and every size of the sweep.
func TestBarrierHolds(t *testing.T) {
	for _, name := range []string{"dissemination", "tree"} {
		t.Run(name, func(t *testing.T) { barrierHolds(t, algorithm(t, coll.Barrier, name)) })
	}
}

func barrierHolds(t *testing.T, alg coll.Algorithm) {
	for _, n := range barrierSizes[1:] {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			t.Parallel()
			args := colltest.Case{Coll: coll.Barrier, Size: n}.Args()
			plans := make([]*coll.Plan, n)
			for r := range args {
				p, err := coll.Build(alg, &args[r])
				if err != nil {
					t.Fatal(err)
				}
				plans[r] = p
			}
			for late := range n {
				f := colltest.NewFabric(n)
				runs := make([]*coll.Run, n)
				for r, p := range plans {
					runs[r] = coll.NewRun(p, f.Transport(r), 1, nil)
					if err := runs[r].Bind(nil, nil); err != nil {
						t.Fatal(err)
					}
				}
				for r, run := range runs {
					if r != late {
						if err := run.Start(); err != nil {
							t.Fatal(err)
						}
					}
				}
				for r, run := range runs {
					if r != late && run.Finished() {
						t.Fatalf("rank %d left the barrier before rank %d entered it", r, late)
					}
				}
				if err := runs[late].Start(); err != nil {
					t.Fatal(err)
				}
				for r, run := range runs {
					if !run.Finished() || run.Err() != nil {
						t.Fatalf("rank %d entered last: rank %d finished %v, %v", late, r, run.Finished(), run.Err())
					}
				}
				if err := f.Pending(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// Ranks that share cores get the tree barrier, the others dissemination.
func TestBarrierSelectOversubscribed(t *testing.T) {
	for _, over := range []bool{false, true} {
		a := colltest.Case{Coll: coll.Barrier, Size: 8}.Args()[5]
		a.Oversubscribed = over
		alg, err := coll.Select(&a, "")
		want := map[bool]string{false: "dissemination", true: "tree"}[over]
		if err != nil || alg.Name != want {
			t.Errorf("oversubscribed %v: got %q (%v), want %q", over, alg.Name, err, want)
		}
	}
}
