package coll

// Exscan "recursive_doubling": MPICH's recursive-doubling exclusive prefix
// reduction, in rank order, so it serves non-commutative ops too.
//
// Source: MPICH's MPIR_Exscan_intra_recursive_doubling. It is Scan's
// recursive_doubling (scan_recursive_doubling.go) but for the result R,
// which starts empty: the first partial from a lower partner is copied
// into R and later ones are prepended to it, so rank r ends with
// x_0 ⊕ … ⊕ x_{r-1}. Rank 0 never has a lower partner, so its receive
// buffer is never written, as MPI requires (MPI-4.1 §6.11.2).
//
// Schedule length: ⌈log2 p⌉ rounds, one exchange of Count elements each.
// Memory: 2·Count elements of scratch; nothing is copied into R before
// the first partial arrives, and in place the input is read only by the
// sends, so the result may overwrite it.
// Restrictions: none.
//
// 5 ranks; x[a..b] is x_a ⊕ … ⊕ x_b, R after each round (- unset):
//
//	          rank 0    rank 1    rank 2    rank 3    rank 4
//	round 0   0 <-> 1             2 <-> 3             (no 5)
//	  R       -         x0        -         x2        -
//	round 1   0 <-----------> 2   1 <-----------> 3   (no 6)
//	  R       -         x0        x[0..1]   x[0..2]   -
//	round 2   0 <---------------------------------------> 4
//	  R       -         x0        x[0..1]   x[0..2]   x[0..3]

func init() {
	Register(Algorithm{Coll: Exscan, Name: "recursive_doubling",
		Desc: "recursive doubling in rank order (MPICH); any op",
		Build: func(b *Builder, a *Args) error {
			return buildScanRecursiveDoubling(b, a, true)
		}})
}
