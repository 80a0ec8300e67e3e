package coll

// Allreduce "reduce_bcast": a binomial reduce to rank 0, then a binomial
// broadcast from it.
//
// Source: Open MPI's ompi_coll_base_allreduce_intra_nonoverlapping
// (reduce, then broadcast), with this package's binomial Reduce (rank-order
// tree at 0, so any op) and binomial Bcast; MPICH's gentran tree allreduce
// has the same shape.
//
// Schedule: 2·⌈log2 n⌉ message times, twice recursive doubling's depth,
// but 2(n-1) messages against n·log2 n (24 at 8 ranks, 14 here). That is
// the trade for ranks that share cores (Args.Oversubscribed): there the
// processors, not the latency, bound the time, and every message costs
// the same matching, completion and scheduling wherever it goes. Measured
// on the 2-core machine, 8 B at 8 ranks: the two collectives in a row
// took 7.1 µs against 10.2 for recursive doubling (persistent, 2026-11-25).
// Memory: the binomial Reduce's slots (⌈log2 n⌉ Count-element scratch at
// most). Restrictions: none (in place: every rank's input is its receive
// buffer).
//
// Trace, n = 5 (tree at 0: children of v are v+1, v+2, v+4, …):
//
//	reduce   1→0   3→2   4→0        at once
//	         2→0                    once 2 has x2 ⊕ x3; 0 folds x[0..4]
//	fence
//	bcast    0→4   0→2   0→1        farthest child first
//	         2→3
func init() {
	Register(Algorithm{Coll: Allreduce, Name: "reduce_bcast",
		Desc:  "binomial reduce to rank 0, then binomial bcast; fewest messages, for ranks that share cores",
		Build: buildAllreduceReduceBcast})
}

func buildAllreduceReduceBcast(b *Builder, a *Args) error {
	cb := a.Bytes(a.Count)
	if cb == 0 {
		return nil
	}
	r := *a
	r.Root = 0
	in := Ref{BufSend, 0, cb}
	if a.InPlace {
		in = Ref{BufRecv, 0, cb}
	}
	reduceBinomial(b, &r, in)
	// the broadcast overwrites the receive buffer, which the reduce may
	// still read (in place) on a rank whose partial is on its way up
	b.Fence()
	bcastBinomial(b, &r)
	return nil
}
