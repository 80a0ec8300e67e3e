package coll

import (
	"slices"

	"github.com/meshmpi/meshmpi/coll/internal/topo"
)

// Bcast "scatter_allgather"
//
// Source: M. Barnett, L. Shuler, R. van de Geijn et al., "Interprocessor
// collective communication library (InterCom)", SHPCC 1994; MPICH
// MPIR_Bcast_intra_scatter_ring_allgather.
//
// Schedule: the Count elements are cut into n blocks whose sizes differ by
// at most one (topo.BlockPart; some are empty when Count < n), block j
// belonging to relative rank j. A binomial scatter (⌈log2 n⌉ levels) gives
// every rank the blocks of its subtree, then a ring allgather (n-1 steps:
// rank v passes block v-i to v+1 in step i) completes every buffer. A
// block the receiver already holds from the scatter, or an empty one, is
// not sent. Every message is cut into segments of at most Args.Segment
// bytes, and a rank forwards a segment as soon as it has it. Each rank
// sends about Count·(2 - 2/n) elements, against Count·⌈log2 n⌉ at the root
// of a binomial bcast. Memory: none. Restrictions: none.
//
// Trace, n = 5, root 0, Count = 5 (block j = element j; subtrees 0:{0-4}
// 1:{1} 2:{2,3} 3:{3} 4:{4}):
//
//	scatter:  0→4 {4}   0→2 {2,3}   0→1 {1}   then 2→3 {3}
//	ring i=0: 0→1 {0}   1→2 {1}   2→3 {2}   3→4 {3}   4→0 —
//	ring i=1: 0→1 {4}   1→2 {0}   2→3 {1}   3→4 {2}   4→0 —
//	ring i=2: 0→1 {3}   1→2 {4}   2→3 {0}   3→4 {1}   4→0 —
//	ring i=3: 0→1 {2}   1→2 —     2→3 {4}   3→4 {0}   4→0 —
//
// (—: skipped, the receiver holds the block: the root all, rank 2 block 3.)
func init() {
	Register(Algorithm{Coll: Bcast, Name: "scatter_allgather",
		Desc:  "binomial scatter of n blocks, then ring allgather (van de Geijn); bandwidth-optimal for large messages",
		Build: buildBcastScatterAllgather})
}

func buildBcastScatterAllgather(b *Builder, a *Args) error {
	n := a.Size
	if n == 1 || a.Count == 0 {
		return nil
	}
	t := topo.Binomial{N: n, Root: a.Root}
	seg := rtSeg(a)
	buf := Ref{BufRecv, 0, a.Bytes(a.Count)}
	// at(j) is where block j starts, at(n) the end of the buffer
	at := func(j int) int {
		lo, _ := topo.BlockPart(j, a.Count, n)
		return a.Bytes(lo)
	}
	// has(w, j): relative rank w holds block j once the scatter is done
	has := func(w, j int) bool { return j >= w && j < w+t.Subtree(t.Abs(w)) }
	v := t.Rel(a.Rank)

	// scatter: my subtree's blocks from my parent, then my children's on
	var fills rtFills // which step wrote which bytes, to forward each as it lands
	scatterRecv := rtNone
	if p := t.Parent(a.Rank); p >= 0 {
		lo, hi := at(v), at(v+t.Subtree(a.Rank))
		for off, l := range rtSegs(hi-lo, seg) {
			scatterRecv = b.Recv(p, buf.Sub(lo+off, l), rtDeps(scatterRecv)...)
			fills.add(lo+off, l, scatterRecv)
		}
	}
	children := t.Children(a.Rank)
	slices.Reverse(children) // farthest first, as in bcast "binomial"
	scatterSend := map[int]StepID{}
	for _, c := range children {
		cv := t.Rel(c)
		lo, hi := at(cv), at(cv+t.Subtree(c))
		prev := rtNone
		for off, l := range rtSegs(hi-lo, seg) {
			prev = b.Send(c, buf.Sub(lo+off, l), rtDeps(append(fills.over(lo+off, lo+off+l), prev)...)...)
		}
		scatterSend[c] = prev
	}

	// ring allgather. The ring's messages to my right neighbour follow the
	// scatter's if it is my child, and those from my left neighbour follow
	// the scatter's if it is my parent: one tag, so one order per pair.
	right, left := t.Abs((v+1)%n), t.Abs((v-1+n)%n)
	sendPrev, ok := scatterSend[right]
	if !ok {
		sendPrev = rtNone
	}
	recvPrev := rtNone
	if left == t.Parent(a.Rank) {
		recvPrev = scatterRecv
	}
	for i := range n - 1 {
		sb, rb := (v-i+n)%n, (v-i-1+n)%n
		if lo, hi := at(sb), at(sb+1); hi > lo && !has((v+1)%n, sb) {
			for off, l := range rtSegs(hi-lo, seg) {
				sendPrev = b.Send(right, buf.Sub(lo+off, l), rtDeps(append(fills.over(lo+off, lo+off+l), sendPrev)...)...)
			}
		}
		if lo, hi := at(rb), at(rb+1); hi > lo && !has(v, rb) {
			for off, l := range rtSegs(hi-lo, seg) {
				recvPrev = b.Recv(left, buf.Sub(lo+off, l), rtDeps(recvPrev)...)
				fills.add(lo+off, l, recvPrev)
			}
		}
	}
	return nil
}
