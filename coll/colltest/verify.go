package colltest

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
)

// Verify checks a set of plans, one per rank, statically: every send from
// rank i to rank j meets a receive that j posts from i, in order and with
// the same size. Sends (and receives) between one pair must be ordered by
// dependencies, because they share the collective's tag and the receiver
// matches them first come, first served. It also checks that every step's
// buffer references stay inside the plan's declared needs.
func Verify(plans []*coll.Plan) error {
	n := len(plans)
	type xfer struct{ step, len int }
	sends := make(map[[2]int][]xfer)
	recvs := make(map[[2]int][]xfer)
	for r, p := range plans {
		if p == nil {
			return fmt.Errorf("rank %d: no plan", r)
		}
		order := topoOrder(p)
		if order == nil {
			return fmt.Errorf("rank %d: %s has a dependency cycle", r, p.Name)
		}
		reach := reachability(p, order)
		last := map[[2]int]int{} // (kind, peer) → last step, to check chains
		for _, i := range order {
			s := p.Steps[i]
			for _, ref := range []coll.Ref{s.A, s.B} {
				if ref.Off < 0 || ref.Len < 0 || ref.Buf == coll.BufScratch && ref.Off+ref.Len > p.Scratch {
					return fmt.Errorf("rank %d: %s step %d: %v outside scratch of %d", r, p.Name, i, ref, p.Scratch)
				}
			}
			if s.Kind != coll.StepSend && s.Kind != coll.StepRecv && s.Kind != coll.StepRecvReduce {
				continue
			}
			peer := int(s.Peer)
			if peer < 0 || peer >= n {
				return fmt.Errorf("rank %d: %s step %d: %s with rank %d of %d", r, p.Name, i, s.Kind, peer, n)
			}
			kind := s.Kind
			if kind == coll.StepRecvReduce { // a receive, matched in order with the others
				kind = coll.StepRecv
			}
			k := [2]int{int(kind), peer}
			if prev, ok := last[k]; ok && !reach[i].has(prev) {
				return fmt.Errorf("rank %d: %s steps %d and %d: two %ss with rank %d not ordered by dependencies", r, p.Name, prev, i, s.Kind, peer)
			}
			last[k] = i
			if s.Kind == coll.StepSend {
				sends[[2]int{r, peer}] = append(sends[[2]int{r, peer}], xfer{i, s.A.Len})
			} else {
				recvs[[2]int{peer, r}] = append(recvs[[2]int{peer, r}], xfer{i, s.A.Len})
			}
		}
	}
	for pair, ss := range sends {
		rs := recvs[pair]
		if len(ss) != len(rs) {
			return fmt.Errorf("rank %d sends %d messages to rank %d, which receives %d", pair[0], len(ss), pair[1], len(rs))
		}
		for k := range ss {
			if ss[k].len != rs[k].len {
				return fmt.Errorf("message %d from rank %d to %d: %d bytes sent (step %d), %d expected (step %d)",
					k, pair[0], pair[1], ss[k].len, ss[k].step, rs[k].len, rs[k].step)
			}
		}
	}
	for pair, rs := range recvs {
		if len(sends[pair]) == 0 && len(rs) > 0 {
			return fmt.Errorf("rank %d expects %d messages from rank %d, which sends none", pair[1], len(rs), pair[0])
		}
	}
	return nil
}

// topoOrder returns the steps in a dependency order, or nil for a cycle.
func topoOrder(p *coll.Plan) []int {
	deg := make([]int32, len(p.Steps))
	var q []int
	for i, s := range p.Steps {
		deg[i] = s.NDeps
		if deg[i] == 0 {
			q = append(q, i)
		}
	}
	order := make([]int, 0, len(p.Steps))
	for len(q) > 0 {
		i := q[0]
		q = q[1:]
		order = append(order, i)
		for _, s := range p.Successors(i) {
			if deg[s]--; deg[s] == 0 {
				q = append(q, int(s))
			}
		}
	}
	if len(order) != len(p.Steps) {
		return nil
	}
	return order
}

// reachability returns reach[i]: the bitset of step i's transitive
// dependencies.
func reachability(p *coll.Plan, order []int) []bitset {
	n := len(p.Steps)
	preds := make([][]int, n)
	for i := range p.Steps {
		for _, s := range p.Successors(i) {
			preds[s] = append(preds[s], i)
		}
	}
	reach := make([]bitset, n)
	for _, i := range order {
		b := make(bitset, (n+63)/64)
		for _, d := range preds[i] {
			b.set(d)
			b.or(reach[d])
		}
		reach[i] = b
	}
	return reach
}

type bitset []uint64

func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) or(c bitset) {
	for k := range c {
		b[k] |= c[k]
	}
}
