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
	checkBarrier(t, "dissemination", func(n int, plans []*coll.Plan) {
		for r, p := range plans {
			sends, recvs := barrierTransfers(p)
			if rounds := bits.Len(uint(n - 1)); sends != rounds || recvs != rounds {
				t.Fatalf("n=%d rank %d: %d sends, %d receives; want %d each", n, r, sends, recvs, rounds)
			}
		}
	})
}

// TestBarrierTree checks the tree barrier's plans statically and against
// the reference: 2(n-1) empty messages in all.
func TestBarrierTree(t *testing.T) {
	checkBarrier(t, "tree", func(n int, plans []*coll.Plan) {
		all := 0
		for _, p := range plans {
			sends, _ := barrierTransfers(p)
			all += sends
		}
		if all != 2*(n-1) {
			t.Fatalf("n=%d: %d messages, want %d", n, all, 2*(n-1))
		}
	})
}

// checkBarrier runs barrier algorithm name against the reference at every
// size and seed, verifies its plans statically, fails on any scratch, and
// hands each size's plans to count.
func checkBarrier(t *testing.T, name string, count func(n int, plans []*coll.Plan)) {
	alg := algorithm(t, coll.Barrier, name)
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
			if p.Scratch != 0 {
				t.Fatalf("n=%d rank %d: %d bytes of scratch", n, r, p.Scratch)
			}
		}
		count(n, plans)
	}
}

// barrierTransfers counts a plan's sends and receives.
func barrierTransfers(p *coll.Plan) (sends, recvs int) {
	for _, s := range p.Steps {
		switch s.Kind {
		case coll.StepSend:
			sends++
		case coll.StepRecv:
			recvs++
		}
	}
	return sends, recvs
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
