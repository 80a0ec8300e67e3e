package abi

/*
#include <stdint.h>
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

const (
	groupNull   uintptr = 0x108
	groupEmpty  uintptr = 0x109
	firstGroup  uintptr = 0x3000000 // the groups the program makes
	resultIdent         = 201       // MPI_IDENT; MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL follow
)

var groups struct {
	mu    sync.Mutex
	t     table[*meshmpi.Group]
	empty *meshmpi.Group
}

// lookupGroup returns the group of a handle.
func lookupGroup(h uintptr) (*meshmpi.Group, error) {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	switch h {
	case groupNull:
		return nil, errorf(errGroup, "MPI_GROUP_NULL is not a group to use")
	case groupEmpty:
		if groups.empty == nil {
			w := worldComm()
			if w == nil {
				return nil, errorf(errOther, "MPI is not initialized")
			}
			g, err := w.Group()
			if err != nil {
				return nil, err
			}
			if groups.empty, err = g.Incl(nil); err != nil {
				return nil, err
			}
		}
		return groups.empty, nil
	}
	g, ok := groups.t.get(h)
	if !ok {
		return nil, errorf(errGroup, "%#x is not a group", h)
	}
	return g, nil
}

// putGroup gives a new group a handle and stores it at out; an empty
// group is MPI_GROUP_EMPTY.
func putGroup(g *meshmpi.Group, out uintptr) error {
	if g.Size() == 0 {
		putHandle(out, groupEmpty)
		return nil
	}
	groups.mu.Lock()
	if groups.t.base == 0 {
		groups.t.base = firstGroup
	}
	h, ok := groups.t.add(g)
	groups.mu.Unlock()
	if !ok {
		return errorf(errIntern, "too many groups")
	}
	putHandle(out, h)
	return nil
}

//export mpiabi_Comm_group
func mpiabi_Comm_group(comm, out uintptr) C.int {
	e, err := lookupComm(comm)
	if err == nil && out == 0 {
		err = errorf(errArg, "group is NULL")
	}
	var g *meshmpi.Group
	if err == nil {
		g, err = e.c.Group()
	}
	if err == nil {
		err = putGroup(g, out)
	}
	return raise(comm, "MPI_Comm_group", err)
}

//export mpiabi_Group_size
func mpiabi_Group_size(h, size uintptr) C.int {
	g, err := lookupGroup(h)
	if err == nil && size == 0 {
		err = errorf(errArg, "size is NULL")
	}
	if err == nil {
		putInt(size, g.Size())
	}
	return raise(self, "MPI_Group_size", err)
}

//export mpiabi_Group_rank
func mpiabi_Group_rank(h, rank uintptr) C.int {
	g, err := lookupGroup(h)
	if err == nil && rank == 0 {
		err = errorf(errArg, "rank is NULL")
	}
	if err == nil {
		r := g.Rank()
		if r == meshmpi.Undefined {
			r = undefined
		}
		putInt(rank, r)
	}
	return raise(self, "MPI_Group_rank", err)
}

func groupRanks(n int32, ranks uintptr) ([]int, error) {
	if n < 0 {
		return nil, errorf(errArg, "n %d is negative", n)
	}
	if n > 0 && ranks == 0 {
		return nil, errorf(errArg, "ranks is NULL")
	}
	return cints(ranks, int(n)), nil
}

// inclExcl is MPI_Group_incl/excl and their range forms: ranks gives
// the ranks named, for a group of size ranks.
func inclExcl(call string, h, out uintptr, excl bool, ranks func(size int) ([]int, error)) C.int {
	g, err := lookupGroup(h)
	var rs []int
	if err == nil {
		rs, err = ranks(g.Size())
	}
	if err == nil && out == 0 {
		err = errorf(errArg, "newgroup is NULL")
	}
	var ng *meshmpi.Group
	if err == nil {
		if excl {
			ng, err = g.Excl(rs)
		} else {
			ng, err = g.Incl(rs)
		}
	}
	if err == nil {
		err = putGroup(ng, out)
	}
	return raise(self, call, err)
}

//export mpiabi_Group_incl
func mpiabi_Group_incl(h uintptr, n int32, ranks, out uintptr) C.int {
	return inclExcl("MPI_Group_incl", h, out, false, func(int) ([]int, error) { return groupRanks(n, ranks) })
}

//export mpiabi_Group_excl
func mpiabi_Group_excl(h uintptr, n int32, ranks, out uintptr) C.int {
	return inclExcl("MPI_Group_excl", h, out, true, func(int) ([]int, error) { return groupRanks(n, ranks) })
}

// rangeRanks expands MPI_Group_range_incl's triplets (first, last,
// stride) for a group of size ranks: ranks are distinct and in the group,
// so a range past that many is an error, not an expansion without bound.
func rangeRanks(n int32, ranges uintptr, size int) ([]int, error) {
	if n < 0 || (n > 0 && ranges == 0) {
		return nil, errorf(errArg, "n %d or ranges is invalid", n)
	}
	trip := unsafe.Slice((*[3]int32)(ptr(ranges)), n)
	var rs []int
	for _, t := range trip {
		first, last, stride := int(t[0]), int(t[1]), int(t[2])
		if stride == 0 || (stride > 0 && first > last) || (stride < 0 && first < last) {
			return nil, errorf(errArg, "range (%d, %d, %d) is empty or has stride 0", first, last, stride)
		}
		for r := first; (stride > 0 && r <= last) || (stride < 0 && r >= last); r += stride {
			if len(rs) == size {
				return nil, errorf(errArg, "ranges name more than the group's %d ranks", size)
			}
			rs = append(rs, r)
		}
	}
	return rs, nil
}

//export mpiabi_Group_range_incl
func mpiabi_Group_range_incl(h uintptr, n int32, ranges, out uintptr) C.int {
	return inclExcl("MPI_Group_range_incl", h, out, false, func(size int) ([]int, error) { return rangeRanks(n, ranges, size) })
}

//export mpiabi_Group_range_excl
func mpiabi_Group_range_excl(h uintptr, n int32, ranges, out uintptr) C.int {
	return inclExcl("MPI_Group_range_excl", h, out, true, func(size int) ([]int, error) { return rangeRanks(n, ranges, size) })
}

func setOp(call string, a, b, out uintptr, f func(g, h *meshmpi.Group) (*meshmpi.Group, error)) C.int {
	g, err := lookupGroup(a)
	var h, ng *meshmpi.Group
	if err == nil {
		h, err = lookupGroup(b)
	}
	if err == nil && out == 0 {
		err = errorf(errArg, "newgroup is NULL")
	}
	if err == nil {
		ng, err = f(g, h)
	}
	if err == nil {
		err = putGroup(ng, out)
	}
	return raise(self, call, err)
}

//export mpiabi_Group_union
func mpiabi_Group_union(a, b, out uintptr) C.int {
	return setOp("MPI_Group_union", a, b, out, (*meshmpi.Group).Union)
}

//export mpiabi_Group_intersection
func mpiabi_Group_intersection(a, b, out uintptr) C.int {
	return setOp("MPI_Group_intersection", a, b, out, (*meshmpi.Group).Intersection)
}

//export mpiabi_Group_difference
func mpiabi_Group_difference(a, b, out uintptr) C.int {
	return setOp("MPI_Group_difference", a, b, out, (*meshmpi.Group).Difference)
}

//export mpiabi_Group_translate_ranks
func mpiabi_Group_translate_ranks(a uintptr, n int32, ranks1, b, ranks2 uintptr) C.int {
	g, err := lookupGroup(a)
	var h *meshmpi.Group
	var rs []int
	if err == nil {
		h, err = lookupGroup(b)
	}
	if err == nil {
		rs, err = groupRanks(n, ranks1)
	}
	if err == nil && n > 0 && ranks2 == 0 {
		err = errorf(errArg, "ranks2 is NULL")
	}
	if err == nil {
		for i, r := range rs {
			rs[i] = rankIn(int32(r))
		}
		var out []int
		if out, err = g.TranslateRanks(rs, h); err == nil {
			dst := unsafe.Slice((*int32)(ptr(ranks2)), n)
			for i, r := range out {
				switch r {
				case meshmpi.Undefined:
					dst[i] = undefined
				default:
					dst[i] = rankOut(r)
				}
			}
		}
	}
	return raise(self, "MPI_Group_translate_ranks", err)
}

//export mpiabi_Group_compare
func mpiabi_Group_compare(a, b, result uintptr) C.int {
	g, err := lookupGroup(a)
	var h *meshmpi.Group
	if err == nil {
		h, err = lookupGroup(b)
	}
	if err == nil && result == 0 {
		err = errorf(errArg, "result is NULL")
	}
	if err == nil {
		var r meshmpi.Comparison
		if r, err = g.Compare(h); err == nil {
			putInt(result, resultIdent+int(r))
		}
	}
	return raise(self, "MPI_Group_compare", err)
}

//export mpiabi_Group_free
func mpiabi_Group_free(p uintptr) C.int {
	if p == 0 {
		return raise(self, "MPI_Group_free", errorf(errArg, "group is NULL"))
	}
	h := getHandle(p)
	if h == groupEmpty { // freeing MPI_GROUP_EMPTY is allowed (MPI-4.1 §7.3.3)
		putHandle(p, groupNull)
		return errSuccess
	}
	if _, err := lookupGroup(h); err != nil {
		return raise(self, "MPI_Group_free", err)
	}
	groups.mu.Lock()
	groups.t.remove(h)
	groups.mu.Unlock()
	putHandle(p, groupNull)
	return errSuccess
}

//export mpiabi_Comm_create
func mpiabi_Comm_create(comm, gh, out uintptr) C.int {
	e, err := lookupComm(comm)
	if err != nil {
		return raise(comm, "MPI_Comm_create", err)
	}
	g, err := lookupGroup(gh)
	if err == nil && out == 0 {
		err = errorf(errArg, "newcomm is NULL")
	}
	var n *meshmpi.Comm
	if err == nil {
		if e.c.TestInter() {
			n, err = createInter(e.c, g)
		} else {
			n, err = e.c.Create(g)
		}
	}
	if err != nil {
		return raise(comm, "MPI_Comm_create", err)
	}
	if n == nil {
		putHandle(out, commNull)
		return errSuccess
	}
	h, err := addComm(e, n)
	if err == nil {
		putHandle(out, h)
	}
	return raise(comm, "MPI_Comm_create", err)
}

// createInter is MPI_Comm_create on an intercommunicator (MPI-4.1
// §7.4.2), which the Go API's Create does not take: each group passes a
// subgroup of its own, and the result joins both subgroups (MPI_COMM_NULL
// where either is empty, or for ranks outside them). MPICH's
// MTestGetIntercomm makes one so. Built from the Go API's calls: merge
// both groups, tell each rank's group and whether it is in, split off the
// members of each side and join the two sides again over the merged
// communicator.
func createInter(inter *meshmpi.Comm, g *meshmpi.Group) (*meshmpi.Comm, error) {
	// a group's label: the world rank of its rank 0, the same at all
	// its ranks and different from the other group's
	lg, err := inter.Group()
	if err != nil {
		return nil, err
	}
	wg, err := worldComm().Group()
	if err != nil {
		return nil, err
	}
	lw, err := lg.TranslateRanks([]int{0}, wg)
	if err != nil {
		return nil, err
	}
	label := int64(lw[0])
	in := g.Rank() != meshmpi.Undefined
	merged, err := inter.IntercommMerge(false)
	if err != nil {
		return nil, err
	}
	defer merged.Free()
	all := make([]int64, 2*merged.Size())
	if err := meshmpi.Allgather(merged, []int64{label, int64(b2i(in))}, all); err != nil {
		return nil, err
	}
	// the remote leader: the other side's first member, by rank in merged
	remote := -1
	for r := 0; r < merged.Size(); r++ {
		if all[2*r+1] == 0 {
			continue
		}
		if all[2*r] != label && remote < 0 {
			remote = r
		}
	}
	color := meshmpi.Undefined
	if in && remote >= 0 {
		color = int(label) // one new group for each side
	}
	sub, err := merged.Split(color, merged.Rank())
	if err != nil || sub == nil {
		return nil, err
	}
	defer sub.Free()
	// a tag of its own: merged is new, nobody else sends on it
	return meshmpi.IntercommCreate(sub, 0, merged, remote, 0x6372)
}
