package coll

// Allgather "recursive_doubling".
//
// Source: Thakur, Rabenseifner, Gropp, "Optimization of collective
// communication operations in MPICH", IJHPCA 19(1), 2005 (MPICH
// allgather_intra_recursive_doubling.c); non-powers of two by the fold of
// libnbc's recursive-doubling allreduce (nbc_iallreduce.c) and MPICH's
// recursive exchange, applied to blocks (topo.AllgatherFold).
//
// Schedule length: log2 p rounds on p = 2^⌊log2 n⌋ ranks, plus a fold
// and an unfold round when n is not a power of two. In round k partners
// exchange 2^k participants' blocks, which are always contiguous in the
// receive buffer, so no scratch and no final rotation are needed. Each
// message split by a.Segment.
//
// Memory: none beyond the receive buffer. In place: yes.
//
// Restrictions: none. With rem = n-p, even ranks below 2·rem ("extras")
// send their block to rank+1 and get the whole result back from it; the
// rest run recursive doubling as participants 0 … p-1.
//
// 6 ranks (p=4, rem=2; participants P0 = rank 1 standing for blocks 0-1,
// P1 = rank 3 for 2-3, P2 = rank 4 for 4, P3 = rank 5 for 5); "x ↔ y:
// bX / bY" is x sending bX and y sending bY:
//
//	fold     0 → 1: b0                2 → 3: b2
//	k=0      1 ↔ 3: b0-1 / b2-3       4 ↔ 5: b4 / b5
//	k=1      1 ↔ 4: b0-3 / b4-5       3 ↔ 5: b0-3 / b4-5
//	unfold   1 → 0: b0-5              3 → 2: b0-5

import "github.com/meshmpi/meshmpi/coll/internal/topo"

func init() {
	Register(Algorithm{
		Coll:  Allgather,
		Name:  "recursive_doubling",
		Desc:  "log2 rounds of pairwise doubling exchanges; non-powers of two fold the extra ranks in and out",
		Build: buildAllgatherRecursiveDoubling,
	})
}

func buildAllgatherRecursiveDoubling(b *Builder, a *Args) error {
	r, n, cb := a.Rank, a.Size, a.Bytes(a.Count)
	if cb == 0 {
		return nil
	}
	blocks := func(lo, hi int) Ref { return Ref{BufRecv, lo * cb, (hi - lo) * cb} }
	mine := blocks(r, r+1)
	src := mine
	if !a.InPlace {
		src = Ref{BufSend, 0, cb}
	}
	f := topo.NewAllgatherFold(n)
	sp := newMsgSplitter(b, a)
	if f.Extra(r) {
		// hand our block over, then receive everything. The whole result
		// lands on our own block too, with the same bytes; it cannot arrive
		// before our block was received, and waiting for our send and copy
		// keeps the two writes ordered here as well.
		peer := f.Partner(r)
		var own StepID = -1
		if !a.InPlace {
			own = b.Copy(src, mine)
		}
		sent := sp.send(peer, src)
		sp.recv(peer, blocks(0, n), liveSteps(own, sent)...)
		return nil
	}
	if !a.InPlace {
		b.Copy(src, mine)
	}
	p := f.Partner(r)
	if p >= 0 {
		sp.recv(p, blocks(p, p+1))
		b.Fence()
	}
	for k := range f.Rounds() {
		d := f.Round(r, k)
		out := blocks(d.SendLo, d.SendHi)
		if k == 0 && p < 0 {
			// a rank without a fold partner sends only its own block
			// first: from the caller's buffer, while the copy runs (the
			// round's fence waits for both), so the first message waits
			// for nothing (2 ranks: one exchange and a copy)
			out = src
		}
		sp.send(d.Peer, out)
		sp.recv(d.Peer, blocks(d.RecvLo, d.RecvHi))
		b.Fence()
	}
	if p := f.Partner(r); p >= 0 {
		sp.send(p, blocks(0, n))
	}
	return nil
}
