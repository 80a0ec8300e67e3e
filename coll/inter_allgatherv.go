package coll

import "fmt"

// Allgatherv "inter_remote_gather_local_bcast" (intercommunicators)
//
// Source: MPICH MPIR_Allgatherv_inter_remote_gather_local_bcast (a Gatherv
// to the other group's rank 0, then a local broadcast of the gathered
// blocks, there through a derived datatype, here packed).
//
// Schedule: every rank sends its block to rank 0 of the other group, which
// receives the remote blocks packed in rank order; each rank 0 broadcasts
// the packed blocks in its group with the intracommunicator algorithm the
// rules pick, and every rank unpacks them to Displs. Empty blocks travel
// as empty messages. 1 + local broadcast message times. Memory: the sum of
// Counts elements of scratch at every rank, plus the local broadcast's.
// Restrictions: none.
//
// Trace, groups of 2 (a) and 3 (b), binomial locally:
//
//	a0→b0  a1→b0          b0→a0  b1→a0  b2→a0       remote gathers
//	a0→a1 {b0 b1 b2}      b0→b2 {a0 a1}  b0→b1      local broadcasts, then unpack
func init() {
	Register(Algorithm{Coll: Allgatherv, Name: "inter_remote_gather_local_bcast", Requires: Inter,
		Desc:  "every rank sends to the other group's rank 0, which broadcasts the packed blocks locally",
		Build: buildInterAllgatherv})
}

func buildInterAllgatherv(b *Builder, a *Args) error {
	if len(a.Counts) < a.RemoteSize || len(a.Displs) < a.RemoteSize {
		return fmt.Errorf("allgatherv needs %d counts and displacements, got %d and %d", a.RemoteSize, len(a.Counts), len(a.Displs))
	}
	interSegs(b, a, true, a.remote(0), Ref{BufSend, 0, a.Bytes(a.Count)}, true)
	at := make([]int, a.RemoteSize+1) // packed offsets in bytes
	for r := range a.RemoteSize {
		at[r+1] = at[r] + a.Bytes(a.Counts[r])
	}
	packed := b.Scratch(at[a.RemoteSize])
	var got []StepID
	if a.Rank == 0 {
		for r := range a.RemoteSize {
			got = append(got, interSegs(b, a, false, a.remote(r), packed.Sub(at[r], at[r+1]-at[r]), true))
		}
	}
	la := Args{Coll: Bcast, Rank: a.Rank, Size: a.Size, Count: at[a.RemoteSize] / max(a.ElemSize, 1), ElemSize: a.ElemSize, Type: a.Type, Segment: a.Segment}
	spread, err := interLocal(b, la, Ref{}, packed, got...)
	if err != nil {
		return err
	}
	for r := range a.RemoteSize {
		if n := at[r+1] - at[r]; n > 0 {
			b.Copy(packed.Sub(at[r], n), Ref{BufRecv, a.Bytes(a.Displs[r]), n}, rtDeps(spread)...)
		}
	}
	return nil
}
