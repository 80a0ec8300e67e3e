package coll

import "fmt"

// Gatherv and Scatterv "inter_linear" (intercommunicators)
//
// Source: MPICH MPIR_Gatherv_allcomm_linear and MPIR_Scatterv_allcomm_linear,
// which serve intercommunicators as they are.
//
// Schedule: one round. Gatherv: every rank of the group without the root
// sends its block to the root, which receives rank r's Counts[r] elements at
// Displs[r]. Scatterv: the root sends each remote rank r its Counts[r]
// elements from Displs[r]. Empty blocks travel as empty messages, so a
// count the two sides disagree on fails instead of waiting. Messages are
// cut into segments of at most Args.Segment bytes. n messages; the root's
// group-mates do nothing. Memory: none. Restrictions: none.
//
// Trace, Gatherv, root a0 in a group of 2, other group of 3:
//
//	b0→a0 {0}  b1→a0 {1}  b2→a0 {2}     (one round)
func init() {
	Register(Algorithm{Coll: Gatherv, Name: "inter_linear", Requires: Inter,
		Desc:  "every rank of the other group sends its block straight to the root",
		Build: buildInterVLinear})
	Register(Algorithm{Coll: Scatterv, Name: "inter_linear", Requires: Inter,
		Desc:  "the root sends every rank of the other group its block",
		Build: buildInterVLinear})
}

func buildInterVLinear(b *Builder, a *Args) error {
	if err := interCheckRoot(a); err != nil {
		return err
	}
	gather := a.Coll == Gatherv
	switch a.Root {
	case InterRootNone:
	case InterRootSelf:
		if len(a.Counts) < a.RemoteSize || len(a.Displs) < a.RemoteSize {
			return fmt.Errorf("%s needs %d counts and displacements, got %d and %d", a.Coll, a.RemoteSize, len(a.Counts), len(a.Displs))
		}
		buf := BufSend
		if gather {
			buf = BufRecv
		}
		for r := range a.RemoteSize {
			interSegs(b, a, !gather, a.remote(r), Ref{buf, a.Bytes(a.Displs[r]), a.Bytes(a.Counts[r])}, true)
		}
	default:
		buf := BufRecv
		if gather {
			buf = BufSend
		}
		interSegs(b, a, gather, a.remote(a.Root), Ref{buf, 0, a.Bytes(a.Count)}, true)
	}
	return nil
}
