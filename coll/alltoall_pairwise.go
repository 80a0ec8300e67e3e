package coll

// Alltoall "pairwise".
//
// Source: MPICH alltoall_intra_pairwise.c (XOR partners on powers of two,
// rank±k otherwise); Open MPI ompi_coll_base_alltoall_intra_pairwise; in
// place after Open MPI's mca_coll_base_alltoall_intra_basic_inplace
// (coll_base_alltoall.c).
//
// Schedule length: n-1 steps, one per Fence; at step k a rank sends one
// block to one partner and receives one from another, so no link carries
// two messages at once. Each message split by a.Segment. Bandwidth-bound
// messages; latency (n-1)·α.
//
// Memory: none out of place. In place a block may be overwritten only
// after it has been sent, so every exchange is a swap (Open MPI's
// mca_coll_base_alltoall_intra_basic_inplace): powers of two swap with
// rank XOR k, n-1 steps; other sizes swap with both rank+k and rank-k at
// step k, ⌊n/2⌋ steps. The block for rank+k leaves from one block of
// scratch, the one for rank-k straight from the buffer, and is
// overwritten once sent.
//
// Restrictions: none.
//
// 5 ranks out of place, step k: rank r sends block r+k to r+k and
// receives block r-k from r-k:
//
//	step   rank 0    rank 1    rank 2    rank 3    rank 4
//	k=1    → 1       → 2       → 3       → 4       → 0
//	k=2    → 2       → 3       → 4       → 0       → 1
//	k=3    → 3       → 4       → 0       → 1       → 2
//	k=4    → 4       → 0       → 1       → 2       → 3
//
// 5 ranks in place, step k: rank r swaps block r+k with rank r+k and
// block r-k with rank r-k:
//
//	k=1    0↔1, 1↔2, 2↔3, 3↔4, 4↔0
//	k=2    0↔2, 1↔3, 2↔4, 3↔0, 4↔1

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll/internal/topo"
)

func init() {
	Register(Algorithm{
		Coll: Alltoall,
		Name: "pairwise",
		Desc: "n-1 steps of one send and one receive (XOR partners on powers of two); for large messages",
		Build: func(b *Builder, a *Args) error {
			cb := a.Bytes(a.Count)
			if cb == 0 {
				return nil
			}
			return pairwiseAlltoall(b, a,
				func(k int) Ref { return Ref{BufSend, k * cb, cb} },
				func(k int) Ref { return Ref{BufRecv, k * cb, cb} })
		},
	})
}

// pairwiseAlltoall emits the pairwise exchange; send(k) is the data for
// rank k (out of place), recv(k) where rank k's data lands, which in place
// also holds the data for rank k (MPI requires symmetric counts there).
// Empty blocks are skipped on both sides.
func pairwiseAlltoall(b *Builder, a *Args, send, recv func(k int) Ref) error {
	r, n := a.Rank, a.Size
	sp := newMsgSplitter(b, a)
	if !a.InPlace {
		if s, d := send(r), recv(r); s.Len != d.Len {
			return fmt.Errorf("rank %d sends itself %d bytes but expects %d", r, s.Len, d.Len)
		} else if s.Len > 0 {
			b.Copy(s, d)
		}
		for k := 1; k <= topo.AlltoallPairwiseSteps(n); k++ {
			to, from := topo.AlltoallPairwise(r, n, k)
			sp.send(to, send(to))
			sp.recv(from, recv(from))
			b.Fence()
		}
		return nil
	}
	biggest := 0
	for k := range n {
		if k != r {
			biggest = max(biggest, recv(k).Len)
		}
	}
	if biggest == 0 {
		return nil
	}
	tmp := b.Scratch(biggest)
	for k := 1; k <= topo.AlltoallInPlaceSteps(n); k++ {
		right, left := topo.AlltoallInPlace(r, n, k)
		// the right partner's block goes out from a scratch copy, so its
		// receive can be posted at once
		if blk := recv(right); blk.Len > 0 {
			saved := tmp.Sub(0, blk.Len)
			c := b.Copy(blk, saved) // after the last Fence: the scratch's previous send is done
			sp.recv(right, blk, c)
			sp.send(right, saved, c)
		}
		// the left partner's block goes out directly and is overwritten
		// once sent; the left partner posts its receive from us at once,
		// so even a send that completes only when matched cannot deadlock
		if left >= 0 && recv(left).Len > 0 {
			blk := recv(left)
			sent := sp.send(left, blk)
			sp.recv(left, blk, sent)
		}
		b.Fence()
	}
	return nil
}
