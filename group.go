package meshmpi

import (
	"fmt"
	"slices"
)

// Group is an ordered set of ranks (MPI_Group). Groups are values: every
// operation returns a new one. Ranks passed to and returned by group methods
// are ranks in that group.
type Group struct {
	ranks []int // world rank of each member
	self  int   // world rank of the rank that owns the group
}

// Size returns the number of members (MPI_Group_size).
func (g *Group) Size() int {
	if g == nil {
		return 0
	}
	return len(g.ranks)
}

// Rank returns the calling rank's rank in g, or Undefined (MPI_Group_rank).
func (g *Group) Rank() int {
	if g == nil {
		return Undefined
	}
	if i := slices.Index(g.ranks, g.self); i >= 0 {
		return i
	}
	return Undefined
}

func (g *Group) derive(ranks []int) *Group { return &Group{ranks: ranks, self: g.self} }

// pick returns the world ranks of the given members of g, which must be
// valid and distinct.
func (g *Group) pick(op string, ranks []int) ([]int, error) {
	if g == nil {
		return nil, fmt.Errorf("%s: nil group: %w", op, ErrGroup)
	}
	out := make([]int, len(ranks))
	seen := make(map[int]bool, len(ranks))
	for i, r := range ranks {
		if r < 0 || r >= len(g.ranks) {
			return nil, fmt.Errorf("%s: rank %d outside a group of %d: %w", op, r, len(g.ranks), ErrRank)
		}
		if seen[r] {
			return nil, fmt.Errorf("%s: rank %d listed twice: %w", op, r, ErrRank)
		}
		seen[r] = true
		out[i] = g.ranks[r]
	}
	return out, nil
}

// Incl returns the group of g's members ranks, in that order (MPI_Group_incl).
func (g *Group) Incl(ranks []int) (*Group, error) {
	w, err := g.pick("group incl", ranks)
	if err != nil {
		return nil, err
	}
	return g.derive(w), nil
}

// Excl returns g without the members ranks, in g's order (MPI_Group_excl).
func (g *Group) Excl(ranks []int) (*Group, error) {
	w, err := g.pick("group excl", ranks)
	if err != nil {
		return nil, err
	}
	return g.derive(filter(g.ranks, func(x int) bool { return !slices.Contains(w, x) })), nil
}

// Union returns g's members followed by h's members not in g (MPI_Group_union).
func (g *Group) Union(h *Group) (*Group, error) {
	if g == nil || h == nil {
		return nil, fmt.Errorf("group union: nil group: %w", ErrGroup)
	}
	return g.derive(append(slices.Clone(g.ranks), filter(h.ranks, func(x int) bool { return !slices.Contains(g.ranks, x) })...)), nil
}

// Intersection returns g's members that are in h, in g's order (MPI_Group_intersection).
func (g *Group) Intersection(h *Group) (*Group, error) {
	if g == nil || h == nil {
		return nil, fmt.Errorf("group intersection: nil group: %w", ErrGroup)
	}
	return g.derive(filter(g.ranks, func(x int) bool { return slices.Contains(h.ranks, x) })), nil
}

// Difference returns g's members that are not in h, in g's order (MPI_Group_difference).
func (g *Group) Difference(h *Group) (*Group, error) {
	if g == nil || h == nil {
		return nil, fmt.Errorf("group difference: nil group: %w", ErrGroup)
	}
	return g.derive(filter(g.ranks, func(x int) bool { return !slices.Contains(h.ranks, x) })), nil
}

// TranslateRanks returns the ranks in h of g's members ranks: Undefined for
// a member not in h, ProcNull for ProcNull (MPI_Group_translate_ranks).
func (g *Group) TranslateRanks(ranks []int, h *Group) ([]int, error) {
	if g == nil || h == nil {
		return nil, fmt.Errorf("translate ranks: nil group: %w", ErrGroup)
	}
	out := make([]int, len(ranks))
	for i, r := range ranks {
		switch {
		case r == ProcNull:
			out[i] = ProcNull
		case r < 0 || r >= len(g.ranks):
			return nil, fmt.Errorf("translate ranks: rank %d outside a group of %d: %w", r, len(g.ranks), ErrRank)
		default:
			out[i] = slices.Index(h.ranks, g.ranks[r])
			if out[i] < 0 {
				out[i] = Undefined
			}
		}
	}
	return out, nil
}

// Compare compares two groups: Ident, Similar or Unequal (MPI_Group_compare).
func (g *Group) Compare(h *Group) (Comparison, error) {
	if g == nil || h == nil {
		return Unequal, fmt.Errorf("group compare: nil group: %w", ErrGroup)
	}
	return compareRanks(g.ranks, h.ranks), nil
}

func compareRanks(a, b []int) Comparison {
	if slices.Equal(a, b) {
		return Ident
	}
	if len(a) == len(b) && len(filter(a, func(x int) bool { return slices.Contains(b, x) })) == len(a) {
		return Similar
	}
	return Unequal
}

func filter(s []int, keep func(int) bool) []int {
	out := make([]int, 0, len(s))
	for _, x := range s {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}
