package coll

// Allgather "bruck".
//
// Source: J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby,
// "Efficient algorithms for all-to-all communications in multiport
// message-passing systems", IEEE TPDS 8(11), 1997; as in MPICH
// allgather_intra_brucks.c and Open MPI ompi_coll_base_allgather_intra_bruck.
//
// Schedule length: ⌈log2 n⌉ rounds for any n; in round k a rank sends
// min(2^k, n-2^k) blocks to rank-2^k and receives as many from rank+2^k.
// Latency-optimal for small messages; each message split by a.Segment.
//
// Memory: n·Count elements of scratch for the rotated buffer, whose
// position i holds the block of rank (rank+i) mod n; a final rotation
// (two copies) puts the blocks in place. In place: yes (the own block is
// read from the receive buffer and never overwritten).
//
// Restrictions: none.
//
// 5 ranks, 3 rounds; rank r's rotated buffer after each round (block
// numbers), and whom it sent to:
//
//	            rank 0       rank 1       rank 2       rank 3       rank 4
//	start       0            1            2            3            4
//	k=0 (d=1)   0 1          1 2          2 3          3 4          4 0      [0] → r-1
//	k=1 (d=2)   0 1 2 3      1 2 3 4      2 3 4 0      3 4 0 1      4 0 1 2  [0,2) → r-2
//	k=2 (d=4)   0 1 2 3 4    1 2 3 4 0    2 3 4 0 1    3 4 0 1 2    4 0 1 2 3  [0,1) → r-4
//	rotate      0 1 2 3 4    0 1 2 3 4    0 1 2 3 4    0 1 2 3 4    0 1 2 3 4

import "github.com/meshmpi/meshmpi/coll/internal/topo"

func init() {
	Register(Algorithm{
		Coll:  Allgather,
		Name:  "bruck",
		Desc:  "Bruck's ⌈log2 n⌉ rounds on a rotated scratch copy, any n; for small messages",
		Build: buildAllgatherBruck,
	})
}

func buildAllgatherBruck(b *Builder, a *Args) error {
	r, n, cb := a.Rank, a.Size, a.Bytes(a.Count)
	if cb == 0 {
		return nil
	}
	mine := Ref{BufRecv, r * cb, cb}
	if !a.InPlace {
		b.Copy(Ref{BufSend, 0, cb}, mine)
	}
	if n == 1 {
		return nil
	}
	src := mine // the input, in place or not
	if !a.InPlace {
		src = Ref{BufSend, 0, cb}
	}
	tmp := b.Scratch(n * cb)
	b.Copy(src, tmp.Sub(0, cb))
	b.Fence()
	sp := newMsgSplitter(b, a)
	for k := range topo.BruckRounds(n) {
		g := topo.BruckAllgatherRound(r, n, k)
		// disjoint: [0, Count) is sent, [Off, Off+Count) received, Count ≤ Off
		sp.send(g.To, tmp.Sub(0, g.Count*cb))
		sp.recv(g.From, tmp.Sub(g.Off*cb, g.Count*cb))
		b.Fence()
	}
	// position i holds block (r+i) mod n: positions 1 … n-1-r are blocks
	// r+1 … n-1, and positions n-r … n-1 are blocks 0 … r-1
	if hi := (n - 1 - r) * cb; hi > 0 {
		b.Copy(tmp.Sub(cb, hi), Ref{BufRecv, (r + 1) * cb, hi})
	}
	if lo := r * cb; lo > 0 {
		b.Copy(tmp.Sub((n-r)*cb, lo), Ref{BufRecv, 0, lo})
	}
	return nil
}
