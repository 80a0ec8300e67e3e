package coll

// Fusing a receive with the reduction of what it received (libNBC and
// gentran receive into scratch, then reduce): with a transport that
// reduces fragments as they land (RecvReducer, the accumulating receive)
// the data crosses memory once instead of twice, and the scratch is not
// touched. Plan fuses a receive v into scratch S with a reduce r of
// exactly S into B when nothing else can tell the difference:
//
//   - r depends on v directly, and none of r's other dependencies
//     depends on v (the fused step waits for all of them, so this would
//     be a cycle);
//   - what r waits for beyond v's own dependencies is local work only
//     (reduces, copies, joins): the fused receive is posted only when r
//     could start, and had it to wait for a send to complete, the ranks
//     of a ring could each wait for the next one's receive (a send by
//     rendezvous completes only once its receive is posted);
//   - every other step that touches S runs before v or after r, so no
//     one reads the received data from S, or writes S meanwhile;
//   - every other receive from v's peer runs before v or after r, so
//     messages still match in the same order although the fused receive
//     is posted later (only once B may be written);
//   - S and B do not overlap.
//
// r becomes the fused step (depending on v's and r's other
// dependencies) and v a no-op that completes after it, so whatever
// waited for v now waits for the data to have landed. The fused step
// keeps S as its landing area for transports without RecvReducer.

// maxFuseSteps bounds the plans fusion looks at: it computes reachability
// once per fusion, quadratic in the plan's size.
const maxFuseSteps = 2048

func (b *Builder) fuseRecvReduce() {
	n := len(b.steps)
	if n > maxFuseSteps || b.op == nil {
		return
	}
	var reach []bitset
	for r := range n {
		red := b.steps[r]
		if red.Kind != StepReduce || red.A.Buf != BufScratch || red.A.Len == 0 || red.A.overlaps(red.B) {
			continue
		}
		v := -1
		for _, d := range b.deps[r] {
			if s := b.steps[d]; s.Kind == StepRecv && s.A == red.A {
				v = int(d)
				break
			}
		}
		if v < 0 {
			continue
		}
		if reach == nil {
			reach = b.reachability()
		}
		if !b.canFuse(reach, v, r) {
			continue
		}
		deps := append([]StepID(nil), b.deps[v]...)
		for _, d := range b.deps[r] {
			if int(d) != v {
				deps = append(deps, d)
			}
		}
		b.steps[r] = Step{Kind: StepRecvReduce, Peer: b.steps[v].Peer, A: red.A, B: red.B}
		b.deps[r] = deps
		b.steps[v] = Step{Kind: StepNop}
		b.deps[v] = []StepID{StepID(r)}
		reach = nil // the edges changed
	}
}

// canFuse checks the conditions above; reach[x] holds the steps x
// (transitively) depends on.
func (b *Builder) canFuse(reach []bitset, v, r int) bool {
	before := func(g, x int) bool { return reach[x].has(g) } // g runs before x
	local := func(x int) bool {
		k := b.steps[x].Kind
		return k == StepReduce || k == StepCopy || k == StepNop
	}
	for _, w := range b.deps[r] {
		if int(w) == v {
			continue
		}
		if before(v, int(w)) || !local(int(w)) {
			return false
		}
		for x := range b.steps { // w's own wait, beyond v's
			if before(x, int(w)) && !before(x, v) && x != v && !local(x) {
				return false
			}
		}
	}
	s, peer := b.steps[v].A, b.steps[v].Peer
	for g, st := range b.steps {
		if g == v || g == r {
			continue
		}
		touches := st.A.overlaps(s) || st.B.overlaps(s)
		sameSource := (st.Kind == StepRecv || st.Kind == StepRecvReduce) && st.Peer == peer
		if (touches || sameSource) && !before(g, v) && !before(r, g) {
			return false
		}
	}
	return true
}

// reachability returns, per step, the set of steps it depends on
// directly or through others. Dependencies need not point to lower ids
// once steps are fused, so it walks a topological order.
func (b *Builder) reachability() []bitset {
	n := len(b.steps)
	words := (n + 63) / 64
	reach := make([]bitset, n)
	state := make([]uint8, n) // 0 new, 1 on the stack, 2 done
	var visit func(i int)
	visit = func(i int) {
		state[i] = 1
		reach[i] = make(bitset, words)
		for _, d := range b.deps[i] {
			if state[d] == 0 {
				visit(int(d))
			}
			if state[d] == 2 {
				reach[i].set(int(d))
				reach[i].or(reach[d])
			}
			// state 1 would be a cycle; fusion never makes one, and Plan's
			// users (the verifier) report them
		}
		state[i] = 2
	}
	for i := range n {
		if state[i] == 0 {
			visit(i)
		}
	}
	return reach
}

// overlaps reports whether two ranges share a byte.
func (x Ref) overlaps(y Ref) bool {
	return x.Buf == y.Buf && x.Len > 0 && y.Len > 0 && x.Off < y.Off+y.Len && y.Off < x.Off+x.Len
}

// bitset is a set of step indices.
type bitset []uint64

func (s bitset) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s bitset) set(i int)      { s[i/64] |= 1 << (i % 64) }
func (s bitset) or(t bitset) {
	for i := range s {
		s[i] |= t[i]
	}
}
