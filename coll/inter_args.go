package coll

import "fmt"

// Intercommunicator collectives (MPI-4.1 §6.2.2, §7.6).
//
// An intercommunicator joins two disjoint groups; a rank's plan is built
// for its own group, the local one (Args.Rank and Args.Size), with
// Args.RemoteSize > 0 the size of the other. Peers below Size are ranks of
// the local group and peer Size+r is rank r of the remote group, so one
// plan runs its local phases and its exchanges with the other group in the
// communicator's one collective context under one tag.
//
// Rooted collectives go one way. In the root's group the root passes
// InterRootSelf and every other rank InterRootNone (whose plan is empty);
// the other group passes the root's rank in the remote group as Root.
// The other collectives run both ways: each group's result comes from the
// other group's data. Nothing runs in place.
//
// Counts, per collective:
//
//	Bcast, Reduce, Allreduce  Count, the same in both groups
//	Gather, Scatter           Count per rank of the non-root group; the root's buffer holds RemoteSize blocks
//	Gatherv, Scatterv         the root: Counts, Displs for the RemoteSize remote ranks; the others: Count
//	Allgather                 Count sent; RemoteCount received from each remote rank (RemoteSize blocks)
//	Allgatherv                Count sent; Counts, Displs of the RemoteSize remote ranks' blocks
//	Alltoall                  BufSend: RemoteSize blocks of Count; BufRecv: RemoteSize blocks of RemoteCount
//	Alltoallv                 SendCounts, SendDispls, Counts, Displs: RemoteSize entries each
//	ReduceScatterBlock        BufSend: Size·Count (MPI: n·recvcount of the own group); BufRecv: Count
//	ReduceScatter             Counts: Size entries, BufSend: their sum (the same sum in both groups)
//
// Selection must agree across the two groups, whose sizes and byte counts
// differ, so every intercommunicator collective has one algorithm (rules.go)
// and the local phases it embeds are chosen by the intracommunicator rules
// from inputs every rank of the local group shares.

// Roots of a rooted intercommunicator collective in the root's own group.
const (
	InterRootSelf = -3 // this rank is the root (MPI_ROOT)
	InterRootNone = -2 // this rank is in the root's group but not the root (MPI_PROC_NULL)
)

// remote returns the peer number of rank r of the remote group.
func (a *Args) remote(r int) int { return a.Size + r }

// InterAgreed returns the arguments of a that both groups of an
// intercommunicator agree on, for the tag's signature: the root and the
// counts that MPI lets differ between the groups are left out (a wrong
// count still fails, as a message of the wrong size). Intracommunicator
// arguments are returned as they are.
func InterAgreed(a *Args) *Args {
	if a.RemoteSize == 0 {
		return a
	}
	g := Args{Coll: a.Coll, ElemSize: a.ElemSize, Type: a.Type, Op: a.Op, RemoteSize: 1}
	switch a.Coll {
	case Bcast, Gather, Scatter, Reduce, Allreduce:
		g.Count = a.Count
	}
	return &g
}

// interLocal adds to b the local phase la of an inter schedule: the
// intracommunicator algorithm the rules pick for la, built on its own and
// spliced in with its buffers moved (gentran's sub-schedule): its send and
// receive buffers become send and recv, its scratch becomes fresh scratch
// of b. Its first steps wait for after. It returns a step that completes
// when all of its steps have, or the join of after when it has none.
func interLocal(b *Builder, la Args, send, recv Ref, after ...StepID) (StepID, error) {
	la.RemoteSize, la.RemoteCount = 0, 0
	alg, err := Select(&la, "")
	if err != nil {
		return rtNone, err
	}
	sub := NewBuilder(la.Op, la.Type)
	if err := alg.Build(sub, &la); err != nil {
		return rtNone, fmt.Errorf("local %s %s: %w", la.Coll, alg.Name, err)
	}
	if sub.err != nil {
		return rtNone, fmt.Errorf("local %s %s: %w", la.Coll, alg.Name, sub.err)
	}
	after = rtDeps(after...)
	if len(sub.steps) == 0 {
		if len(after) == 0 {
			return rtNone, nil
		}
		return b.Join(after...), nil
	}
	var scr Ref
	if sub.scratch > 0 {
		scr = b.Scratch(sub.scratch)
	}
	into := [numBufs]Ref{BufSend: send, BufRecv: recv, BufScratch: scr}
	move := func(r Ref) (Ref, error) {
		if r.Len == 0 {
			return Ref{}, nil
		}
		to := into[r.Buf]
		if r.Off+r.Len > to.Len {
			return Ref{}, fmt.Errorf("local %s %s: %s bytes [%d, %d) outside the %d given", la.Coll, alg.Name, r.Buf, r.Off, r.Off+r.Len, to.Len)
		}
		return to.Sub(r.Off, r.Len), nil
	}
	base := StepID(len(b.steps))
	last := make([]bool, len(sub.steps)) // no successor in the sub-plan
	for i := range last {
		last[i] = true
	}
	for i, s := range sub.steps {
		if s.A, err = move(s.A); err == nil {
			s.B, err = move(s.B)
		}
		if err != nil {
			return rtNone, err
		}
		deps := after
		if len(sub.deps[i]) > 0 {
			deps = make([]StepID, len(sub.deps[i]))
			for j, d := range sub.deps[i] {
				deps[j] = base + d
				last[d] = false
			}
		}
		b.add(s, deps)
	}
	var ends []StepID
	for i, l := range last {
		if l {
			ends = append(ends, base+StepID(i))
		}
	}
	return b.Join(ends...), nil
}

// interSegs adds the transfers of one message of r with peer, cut into
// segments of at most a.Segment bytes as both sides cut it, each after the
// one before; send picks the direction. It returns the last (rtNone for an
// empty r unless always: v-collectives send their empty blocks too, so a
// count that differs between the sides fails instead of waiting).
func interSegs(b *Builder, a *Args, send bool, peer int, r Ref, always bool, after ...StepID) StepID {
	prev := rtNone
	add := b.Recv
	if send {
		add = b.Send
	}
	if r.Len == 0 {
		if always {
			return add(peer, Ref{}, rtDeps(after...)...)
		}
		return rtNone
	}
	for off, n := range rtSegs(r.Len, rtSeg(a)) {
		deps := rtDeps(prev)
		if prev == rtNone {
			deps = rtDeps(after...)
		}
		prev = add(peer, r.Sub(off, n), deps...)
	}
	return prev
}

// interCheckRoot checks the root of a rooted inter call.
func interCheckRoot(a *Args) error {
	if a.Root != InterRootSelf && a.Root != InterRootNone && (a.Root < 0 || a.Root >= a.RemoteSize) {
		return fmt.Errorf("root %d of a remote group of %d", a.Root, a.RemoteSize)
	}
	return nil
}
