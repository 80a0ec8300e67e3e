package coll

// Alltoall "gather_bcast".
//
// An Allgather of every rank's whole send buffer (its n blocks), by
// Allgather's gather_bcast (binomial gather of the n rows to rank 0, then
// a binomial bcast of all n×n blocks), after which each rank copies its
// column — block r of every row — into its receive buffer. 2(n-1)
// messages in all, against Bruck's n⌈log2 n⌉ and linear's n(n-1), for n²
// times the bytes: where ranks share cores each message costs a context
// switch, and for blocks of a few bytes the bytes cost nothing (8 ranks
// on 2 cores, 8 B blocks: see rules.go).
//
// Memory: the n×n blocks as scratch, and the gather's.
//
// Restrictions: none; the rules pick it only for tiny blocks on few
// ranks, where n²·block stays small.

func init() {
	Register(Algorithm{
		Coll:  Alltoall,
		Name:  "gather_bcast",
		Desc:  "Allgather's gather_bcast of the whole send buffers, then each rank's column; fewest messages, for tiny blocks where ranks share cores",
		Build: buildAlltoallGatherBcast,
	})
}

func buildAlltoallGatherBcast(b *Builder, a *Args) error {
	r, n, cb := a.Rank, a.Size, a.Bytes(a.Count)
	if cb == 0 || n == 1 && a.InPlace {
		return nil
	}
	out := func(k int) Ref { return Ref{BufRecv, k * cb, cb} }
	if n == 1 {
		b.Copy(Ref{BufSend, 0, cb}, out(0))
		return nil
	}
	all := b.Scratch(n * n * cb) // row j: rank j's send buffer
	g := *a
	g.Coll, g.Count, g.InPlace = Allgather, a.Count*n, false
	first := len(b.steps)
	if err := buildAllgatherGatherBcast(b, &g); err != nil {
		return err
	}
	// the allgather's receive buffer is the scratch; in place, its input
	// (the send buffer) is the receive buffer, which only the picks
	// below overwrite, after every step above
	for i := first; i < len(b.steps); i++ {
		s := &b.steps[i]
		for _, ref := range []*Ref{&s.A, &s.B} {
			switch {
			case ref.Buf == BufRecv:
				ref.Buf, ref.Off = BufScratch, all.Off+ref.Off
			case ref.Buf == BufSend && a.InPlace:
				ref.Buf = BufRecv
			}
		}
	}
	b.Fence()
	for j := range n {
		b.Copy(all.Sub(j*n*cb+r*cb, cb), out(j))
	}
	return nil
}
