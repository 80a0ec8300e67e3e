package coll

// Alltoall "bruck".
//
// Source: J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby,
// "Efficient algorithms for all-to-all communications in multiport
// message-passing systems", IEEE TPDS 8(11), 1997, the index algorithm
// with radix 2; as in MPICH alltoall_intra_brucks.c and Open MPI
// ompi_coll_base_alltoall_intra_bruck, mirrored (sending down, not up) so that
// the final layout is a plain rotation.
//
// Schedule length: ⌈log2 n⌉ rounds for any n; in round k a rank packs the
// blocks at positions with bit k set (about n/2 of them) into one message
// to rank-2^k and unpacks the one from rank+2^k. Each block travels
// log-many hops: fewer messages, more bytes than pairwise — for small
// messages. Each message split by a.Segment.
//
// Memory: two pack buffers of the largest round (≈ n/2 blocks) as
// scratch; in place also a copy of the whole input. Position i of rank r
// (topo.BruckAlltoallDest) starts as r's block for r-i, read from the
// input where it lies, and after its first move lives in the receive
// buffer at block r+i, where it finally belongs (topo.BruckAlltoallSource),
// so there is neither an initial nor a final rotation pass.
//
// Restrictions: none.
//
// 5 ranks, 3 rounds; "ij" is the block rank i sends to rank j, shown at
// rank 0's positions 0 … 4 (every rank alike, shifted):
//
//	start      00 04 03 02 01
//	k=0 [1,3]  00 10 03 13 01    positions 1, 3 to rank 4; rank 1's arrive
//	k=1 [2,3]  00 10 20 30 01    positions 2, 3 to rank 3; rank 2's arrive
//	k=2 [4]    00 10 20 30 40    position 4 to rank 1; rank 4's arrives
//
// after which position i holds the block from rank i: no rotation needed.

import "github.com/meshmpi/meshmpi/coll/internal/topo"

func init() {
	Register(Algorithm{
		Coll:  Alltoall,
		Name:  "bruck",
		Desc:  "Bruck's ⌈log2 n⌉ rounds, packing half the blocks per round; for small messages, any n",
		Build: buildAlltoallBruck,
	})
}

func buildAlltoallBruck(b *Builder, a *Args) error {
	r, n, cb := a.Rank, a.Size, a.Bytes(a.Count)
	if cb == 0 || n == 1 && a.InPlace {
		return nil
	}
	out := func(k int) Ref { return Ref{BufRecv, k * cb, cb} }
	input := Ref{BufSend, 0, n * cb}
	if a.InPlace {
		// blocks move into slots whose input has not been sent yet
		input = b.Scratch(n * cb)
		b.Copy(Ref{BufRecv, 0, n * cb}, input)
	} else {
		b.Copy(input.Sub(r*cb, cb), out(r))
	}
	if n == 1 {
		return nil
	}
	b.Fence()
	most := topo.BruckAlltoallMaxMoved(n) * cb
	sbuf, rbuf := b.Scratch(most), b.Scratch(most)
	sp := newMsgSplitter(b, a)
	for k := range topo.BruckRounds(n) {
		ps := topo.BruckAlltoallPositions(n, k)
		to, from := topo.BruckPeers(r, n, k)
		var pack, unpack blockCopies
		for j, i := range ps {
			at := out(topo.BruckAlltoallSource(r, n, i)) // moved before
			if topo.BruckAlltoallFirstMove(i) == k {
				at = input.Sub(topo.BruckAlltoallDest(r, n, i)*cb, cb)
			}
			pack.add(at, sbuf.Sub(j*cb, cb))
			unpack.add(rbuf.Sub(j*cb, cb), out(topo.BruckAlltoallSource(r, n, i)))
		}
		packed := pack.emit(b)
		sp.send(to, sbuf.Sub(0, len(ps)*cb), packed...)
		got := sp.recv(from, rbuf.Sub(0, len(ps)*cb))
		// unpacking overwrites the slots the packing read
		unpack.emit(b, append(packed, got)...)
		b.Fence()
	}
	return nil
}

// blockCopies collects copies and merges each into the previous one when
// both its source and its destination continue the previous ones, so runs
// of adjacent blocks cost one step.
type blockCopies struct{ src, dst []Ref }

func (c *blockCopies) add(src, dst Ref) {
	if k := len(c.src) - 1; k >= 0 {
		s, d := &c.src[k], &c.dst[k]
		if s.Buf == src.Buf && s.Off+s.Len == src.Off && d.Buf == dst.Buf && d.Off+d.Len == dst.Off {
			s.Len += src.Len
			d.Len += dst.Len
			return
		}
	}
	c.src, c.dst = append(c.src, src), append(c.dst, dst)
}

// emit adds the copies, each after deps (or the last fence), and returns
// their steps.
func (c *blockCopies) emit(b *Builder, deps ...StepID) []StepID {
	ids := make([]StepID, len(c.src))
	for k := range c.src {
		ids[k] = b.Copy(c.src[k], c.dst[k], deps...)
	}
	return ids
}
