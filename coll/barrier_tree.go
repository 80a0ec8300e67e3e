package coll

import "github.com/meshmpi/meshmpi/coll/internal/topo"

// Barrier "tree"
//
// Source: the static tree barrier of J. Mellor-Crummey and M. Scott,
// "Algorithms for scalable synchronization on shared-memory
// multiprocessors", ACM TOCS 9(1), 1991 (arrival up a tree, wake-up down
// it), here on the binomial tree at rank 0 (topo.Binomial).
//
// Schedule: 2·⌈log2 n⌉ message times. A rank waits for an empty message
// from each child (its subtree has arrived), sends one to its parent, waits
// for the parent's answer and passes it to its children; rank 0 answers once
// all its children have reported. 2(n-1) messages against dissemination's
// n·⌈log2 n⌉: the trade for ranks that share cores (Args.Oversubscribed),
// where every message costs processor time and depth hides nothing.
// Memory: none. Restrictions: none.
//
// Trace, n = 5 (children of v are v+1, v+2, v+4, …):
//
//	arrive   1→0   3→2   4→0        at once
//	         2→0                    once 3 has arrived
//	release  0→4   0→2   0→1        once 1, 2 and 4 have
//	         2→3
func init() {
	Register(Algorithm{Coll: Barrier, Name: "tree",
		Desc:  "arrival up a binomial tree to rank 0, release down it; fewest messages, for ranks that share cores",
		Build: buildBarrierTree})
}

func buildBarrierTree(b *Builder, a *Args) error {
	t := topo.Binomial{N: a.Size, Root: 0}
	children, parent := t.Children(a.Rank), t.Parent(a.Rank)
	arrived := make([]StepID, len(children))
	for i, c := range children {
		arrived[i] = b.Recv(c, Ref{})
	}
	release := arrived // rank 0: everyone has arrived
	if parent >= 0 {
		up := b.Send(parent, Ref{}, arrived...)
		release = []StepID{b.Recv(parent, Ref{}, up)}
	}
	for _, c := range children {
		b.Send(c, Ref{}, release...)
	}
	return nil
}
