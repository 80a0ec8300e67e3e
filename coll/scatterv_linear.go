package coll

import "fmt"

// Scatterv "linear"
//
// Source: MPICH MPIR_Scatterv_allcomm_linear; libnbc nbc_iscatterv.c.
//
// Schedule: one round. The root sends rank r its Counts[r] elements from
// Displs[r] of its send buffer, all n-1 sends at once; every other rank
// receives its Counts[rank] elements straight into its receive buffer.
// Empty blocks are not sent. Each message is cut into segments of at most
// Args.Segment bytes. n-1 messages.
// Memory: none. In place, the root's block stays in its send buffer and its
// receive buffer is not touched. Restrictions: none.
//
// Trace, n = 5, root 2:
//
//	2→0 {0}   2→1 {1}   2→3 {3}   2→4 {4}     (one round)
func init() {
	Register(Algorithm{Coll: Scatterv, Name: "linear",
		Desc:  "the root sends every rank its block at once; one round",
		Build: buildScattervLinear})
}

func buildScattervLinear(b *Builder, a *Args) error {
	if len(a.Counts) < a.Size || a.Rank == a.Root && len(a.Displs) < a.Size {
		return fmt.Errorf("scatterv needs %d counts and displacements, got %d and %d", a.Size, len(a.Counts), len(a.Displs))
	}
	seg := rtSeg(a)
	if a.Rank != a.Root {
		dst, prev := Ref{BufRecv, 0, a.Bytes(a.Counts[a.Rank])}, rtNone
		for off, l := range rtSegs(dst.Len, seg) {
			prev = b.Recv(a.Root, dst.Sub(off, l), rtDeps(prev)...)
		}
		return nil
	}
	for r := range a.Size {
		src := Ref{BufSend, a.Bytes(a.Displs[r]), a.Bytes(a.Counts[r])}
		if r == a.Root {
			if !a.InPlace && src.Len > 0 {
				b.Copy(src, Ref{BufRecv, 0, src.Len})
			}
			continue
		}
		prev := rtNone
		for off, l := range rtSegs(src.Len, seg) {
			prev = b.Send(r, src.Sub(off, l), rtDeps(prev)...)
		}
	}
	return nil
}
