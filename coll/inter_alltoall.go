package coll

import "fmt"

// Alltoall and Alltoallv "inter_pairwise" (intercommunicators)
//
// Source: MPICH MPIR_Alltoall_inter_pairwise_exchange and
// MPIR_Alltoallv_inter_pairwise_exchange.
//
// Schedule: m = max(n, RemoteSize) rounds, one Fence each. In round i rank
// r sends its block for remote rank (r+i) mod m and receives the block of
// remote rank (r-i) mod m, skipping a partner number past the remote
// group's end; the other group runs the same rounds, so every pair meets
// in one round. Messages are cut into segments of at most Args.Segment
// bytes. Alltoall skips empty blocks (both sides know they are empty);
// Alltoallv sends them as empty messages, so counts the sides disagree on
// fail instead of waiting. Memory: none. Restrictions: none.
//
// Trace, groups of 2 (a) and 3 (b), m = 3:
//
//	round 0:  a0↔b0  a1↔b1            (b2 waits: its partner 2 is past a's end)
//	round 1:  a0→b1  a1→b2  b0→a1  b2→a0 …
//	round 2:  a0→b2  a1→b0  b1→a0 …
func init() {
	Register(Algorithm{Coll: Alltoall, Name: "inter_pairwise", Requires: Inter,
		Desc:  "max(n, remote) rounds of pairwise exchange across the groups",
		Build: buildInterAlltoall})
	Register(Algorithm{Coll: Alltoallv, Name: "inter_pairwise", Requires: Inter,
		Desc:  "max(n, remote) rounds of pairwise exchange across the groups",
		Build: buildInterAlltoall})
}

func buildInterAlltoall(b *Builder, a *Args) error {
	v := a.Coll == Alltoallv
	block := func(buf Buf, r int) Ref {
		if buf == BufSend {
			return Ref{buf, a.Bytes(r * a.Count), a.Bytes(a.Count)}
		}
		return Ref{buf, a.Bytes(r * a.RemoteCount), a.Bytes(a.RemoteCount)}
	}
	if v {
		if len(a.SendCounts) < a.RemoteSize || len(a.SendDispls) < a.RemoteSize || len(a.Counts) < a.RemoteSize || len(a.Displs) < a.RemoteSize {
			return fmt.Errorf("alltoallv needs %d counts and displacements each way", a.RemoteSize)
		}
		block = func(buf Buf, r int) Ref {
			if buf == BufSend {
				return Ref{buf, a.Bytes(a.SendDispls[r]), a.Bytes(a.SendCounts[r])}
			}
			return Ref{buf, a.Bytes(a.Displs[r]), a.Bytes(a.Counts[r])}
		}
	}
	m := max(a.Size, a.RemoteSize)
	for i := range m {
		if src := (a.Rank - i + m) % m; src < a.RemoteSize {
			interSegs(b, a, false, a.remote(src), block(BufRecv, src), v)
		}
		if dst := (a.Rank + i) % m; dst < a.RemoteSize {
			interSegs(b, a, true, a.remote(dst), block(BufSend, dst), v)
		}
		b.Fence()
	}
	return nil
}
