package coll

// Alltoall "linear".
//
// Source: Open MPI ompi_coll_base_alltoall_intra_basic_linear (every
// receive and send posted at once); MPICH's alltoall_intra_scattered
// with the whole group as one batch.
//
// Schedule length: one step: a rank sends its n-1 blocks and receives
// n-1 blocks, all posted together, then one Fence. Partners are visited
// in the pairwise order (send to r+k, receive from r-k) so that ranks do
// not all send to rank 0 first. Latency: one synchronization where
// pairwise has n-1; the price is n-1 messages in flight per rank, which
// contend for the links when messages are large and each rank has a core.
// Where ranks share cores, every extra step is a round of context
// switches, and posting everything at once is what wins (8 ranks on 2
// cores: rules.go).
//
// Memory: none.
//
// Restrictions: none. In place it runs pairwise's swaps (a block may be
// overwritten only after it has been sent).

func init() {
	Register(Algorithm{
		Coll: Alltoall,
		Name: "linear",
		Desc: "every send and receive posted at once, one step; for ranks that share cores",
		Build: func(b *Builder, a *Args) error {
			cb := a.Bytes(a.Count)
			if cb == 0 {
				return nil
			}
			if a.InPlace {
				return pairwiseAlltoall(b, a, nil,
					func(k int) Ref { return Ref{BufRecv, k * cb, cb} })
			}
			r, n := a.Rank, a.Size
			b.Copy(Ref{BufSend, r * cb, cb}, Ref{BufRecv, r * cb, cb})
			sp := newMsgSplitter(b, a)
			for k := 1; k < n; k++ {
				to, from := (r+k)%n, (r-k+n)%n
				sp.send(to, Ref{BufSend, to * cb, cb})
				sp.recv(from, Ref{BufRecv, from * cb, cb})
			}
			b.Fence()
			return nil
		},
	})
}
