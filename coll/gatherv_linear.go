package coll

import "fmt"

// Gatherv "linear"
//
// Source: MPICH MPIR_Gatherv_allcomm_linear; libnbc nbc_igatherv.c.
//
// Schedule: one round. Every rank but the root sends its Counts[rank]
// elements to the root, which receives rank r's straight into its receive
// buffer at Displs[r]; all n-1 receives are posted at once. Empty
// contributions are not sent. Each message is cut into segments of at most
// Args.Segment bytes. n-1 messages; the root's link is the bottleneck, as
// with any gatherv whose counts only the root knows.
// Memory: none. In place, the root's block is already at Displs[root].
// Restrictions: none.
//
// Trace, n = 5, root 2:
//
//	0→2 {0}   1→2 {1}   3→2 {3}   4→2 {4}     (one round)
func init() {
	Register(Algorithm{Coll: Gatherv, Name: "linear",
		Desc:  "every rank sends to the root at once; one round",
		Build: buildGathervLinear})
}

func buildGathervLinear(b *Builder, a *Args) error {
	if len(a.Counts) < a.Size || a.Rank == a.Root && len(a.Displs) < a.Size {
		return fmt.Errorf("gatherv needs %d counts and displacements, got %d and %d", a.Size, len(a.Counts), len(a.Displs))
	}
	seg := rtSeg(a)
	if a.Rank != a.Root {
		src, prev := Ref{BufSend, 0, a.Bytes(a.Counts[a.Rank])}, rtNone
		for off, l := range rtSegs(src.Len, seg) {
			prev = b.Send(a.Root, src.Sub(off, l), rtDeps(prev)...)
		}
		return nil
	}
	for r := range a.Size {
		dst := Ref{BufRecv, a.Bytes(a.Displs[r]), a.Bytes(a.Counts[r])}
		if r == a.Root {
			if !a.InPlace && dst.Len > 0 {
				b.Copy(Ref{BufSend, 0, dst.Len}, dst)
			}
			continue
		}
		prev := rtNone
		for off, l := range rtSegs(dst.Len, seg) {
			prev = b.Recv(r, dst.Sub(off, l), rtDeps(prev)...)
		}
	}
	return nil
}
