package topo

// Binomial is the binomial tree of N ranks rooted at Root, numbered as in
// MPICH's MPIR_Bcast_intra_binomial: ranks are renumbered relative to the
// root, v = (r - Root) mod N, the parent of v > 0 is v with its lowest set
// bit cleared, and the children of v are v + m for the powers of two m
// below v's lowest set bit (any m for the root) with v + m < N. So v's
// subtree is the run of relative ranks [v, v+Subtree(v)), which is what lets
// gather and scatter move a subtree's blocks as one contiguous piece.
type Binomial struct{ N, Root int }

// Rel returns rank r's number relative to the root.
func (t Binomial) Rel(r int) int { return (r - t.Root + t.N) % t.N }

// Abs returns the rank whose relative number is v.
func (t Binomial) Abs(v int) int { return (v + t.Root) % t.N }

// lowbit is the lowest set bit of v > 0, and "infinity" (a power of two ≥ N)
// for the root, whose subtree is everything.
func (t Binomial) lowbit(v int) int {
	if v == 0 {
		m := 1
		for m < t.N {
			m <<= 1
		}
		return m
	}
	return v & -v
}

// Parent returns rank r's parent, -1 for the root.
func (t Binomial) Parent(r int) int {
	v := t.Rel(r)
	if v == 0 {
		return -1
	}
	return t.Abs(v - v&-v)
}

// Subtree returns the number of ranks in r's subtree, r included: the
// relative ranks [Rel(r), Rel(r)+Subtree(r)).
func (t Binomial) Subtree(r int) int {
	v := t.Rel(r)
	return min(t.lowbit(v), t.N-v)
}

// Children returns r's children, smallest subtree first: child i's subtree
// is 2^i ranks, except that the last may be cut short by N.
func (t Binomial) Children(r int) []int {
	v := t.Rel(r)
	var cs []int
	for m := 1; m < t.lowbit(v) && v+m < t.N; m <<= 1 {
		cs = append(cs, t.Abs(v+m))
	}
	return cs
}
