package coll

import "github.com/meshmpi/meshmpi/coll/internal/topo"

// Barrier "inter_fanin_exchange" (intercommunicators)
//
// Source: MPICH MPIR_Barrier_inter_bcast (a local barrier, then a one-byte
// broadcast each way between the groups), with the local barrier folded
// into the fan-in and the broadcasts into the fan-out of one binomial tree.
//
// Schedule: empty messages. Each group fans in to its rank 0 over a
// binomial tree, the two rank 0s exchange one message, and each fans out
// over the same tree; a rank leaves only after the fan-out reaches it,
// which is after every rank of the other group has entered (MPI-4.1
// §6.3). 2·⌈log2 n⌉ + 1 message times, 2(n-1) + 1 messages per group.
// Memory: none. Restrictions: none.
//
// Trace, groups of 3 (a0 a1 a2) and 2 (b0 b1):
//
//	fan-in:    a1→a0  a2→a0       b1→b0
//	exchange:  a0→b0  b0→a0
//	fan-out:   a0→a1  a0→a2       b0→b1
func init() {
	Register(Algorithm{Coll: Barrier, Name: "inter_fanin_exchange", Requires: Inter,
		Desc:  "binomial fan-in to rank 0, rank 0s exchange, binomial fan-out",
		Build: buildInterBarrier})
}

func buildInterBarrier(b *Builder, a *Args) error {
	t := topo.Binomial{N: a.Size, Root: 0}
	var in []StepID
	for _, c := range t.Children(a.Rank) {
		in = append(in, b.Recv(c, Ref{}))
	}
	var got StepID
	if p := t.Parent(a.Rank); p >= 0 {
		got = b.Recv(p, Ref{}, b.Send(p, Ref{}, in...))
	} else {
		b.Send(a.remote(0), Ref{}, in...)
		got = b.Recv(a.remote(0), Ref{})
	}
	for _, c := range t.Children(a.Rank) {
		b.Send(c, Ref{}, got)
	}
	return nil
}
