package coll

import "github.com/meshmpi/meshmpi/coll/internal/topo"

// Barrier "dissemination"
//
// Source: D. Hensgen, R. Finkel, U. Manber, "Two algorithms for barrier
// synchronization", IJPP 17(1), 1988; MPICH MPIR_Barrier_intra_dissemination
// and libnbc nbc_ibarrier.c follow the same scheme.
//
// Schedule: ⌈log2 n⌉ rounds. In round k rank r sends an empty message to
// r+2^k and receives one from r-2^k (mod n); a round starts when the
// previous one is complete, so after round k rank r knows that the 2^(k+1)-1
// ranks before it have arrived. n·⌈log2 n⌉ messages, all zero bytes (a
// receive takes exactly Ref.Len bytes, so the refs are empty).
// Memory: none. Restrictions: none.
//
// Trace, n = 5 (3 rounds):
//
//	round 0:  0→1  1→2  2→3  3→4  4→0
//	round 1:  0→2  1→3  2→4  3→0  4→1
//	round 2:  0→4  1→0  2→1  3→2  4→3
func init() {
	Register(Algorithm{Coll: Barrier, Name: "dissemination",
		Desc:  "⌈log2 n⌉ rounds of empty messages to rank+2^k (Hensgen, Finkel, Manber)",
		Build: buildBarrierDissemination})
}

func buildBarrierDissemination(b *Builder, a *Args) error {
	for k := range topo.DisseminationRounds(a.Size) {
		to, from := topo.DisseminationPeers(a.Rank, k, a.Size)
		b.Send(to, Ref{})
		b.Recv(from, Ref{})
		b.Fence()
	}
	return nil
}
