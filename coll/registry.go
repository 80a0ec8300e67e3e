package coll

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
)

// ErrAlgorithm means a forced algorithm does not exist for the collective
// or its restrictions do not hold for the call.
var ErrAlgorithm = errors.New("algorithm not applicable")

// Restriction is a condition an algorithm needs (MPICH's restrictions:).
type Restriction uint8

// Restrictions.
const (
	Commutative    Restriction = 1 << iota // the op is commutative
	PowerOfTwo                             // the group size is a power of two
	NotInPlace                             // the call is not in place
	CountGESize                            // Count ≥ Size (Rabenseifner-style halving)
	Inter                                  // an intercommunicator algorithm; the others are intra only
	Oversubscribed                         // the ranks share cores (Args.Oversubscribed); for rules
)

func (r Restriction) holds(a *Args) error {
	switch {
	case r&Inter == 0 && a.RemoteSize > 0:
		return errors.New("is for intracommunicators")
	case r&Inter != 0 && a.RemoteSize == 0:
		return errors.New("is for intercommunicators")
	case r&Commutative != 0 && !a.Commutative():
		return errors.New("needs a commutative op")
	case r&PowerOfTwo != 0 && a.Size&(a.Size-1) != 0:
		return fmt.Errorf("needs a power-of-two group, not %d", a.Size)
	case r&NotInPlace != 0 && a.InPlace:
		return errors.New("cannot run in place")
	case r&Oversubscribed != 0 && !a.Oversubscribed:
		return errors.New("is for ranks that share cores")
	case r&CountGESize != 0 && a.Count < a.Size:
		return fmt.Errorf("needs at least one element per rank (%d < %d)", a.Count, a.Size)
	}
	return nil
}

// Algorithm is one way to run a collective.
type Algorithm struct {
	Coll     Coll
	Name     string
	Desc     string
	Requires Restriction
	Build    func(b *Builder, a *Args) error
	// DataLeads, if set, reports whether the algorithm's data opens the
	// agreement ring's edge from the root to the next rank (agree.go) for
	// a call: the root's first message to rank (Root+1) mod Size is data
	// it sends waiting for nothing, and that rank's first receive from
	// the root one that waits for nothing, so the ring token of that edge
	// is left out (TestDataLeads checks the shape).
	DataLeads func(a *Args) bool
	// DataEnds is DataLeads for the ring's edge into the root: rank
	// (Root-1) mod Size's first message to the root is data it sends
	// waiting for nothing, and the root's first receive from it one that
	// waits for nothing (a binomial Reduce or Gather where that rank is
	// a child of the root), so that edge's token is left out.
	DataEnds func(a *Args) bool
}

var registry [NumColls][]Algorithm

// Register adds an algorithm; algorithm files call it from init.
func Register(alg Algorithm) {
	if alg.Coll >= NumColls || alg.Name == "" || alg.Build == nil {
		panic(fmt.Sprintf("coll: bad registration %+v", alg))
	}
	for _, a := range registry[alg.Coll] {
		if a.Name == alg.Name {
			panic(fmt.Sprintf("coll: %s algorithm %q registered twice", alg.Coll, alg.Name))
		}
	}
	registry[alg.Coll] = append(registry[alg.Coll], alg)
	sort.Slice(registry[alg.Coll], func(i, j int) bool { return registry[alg.Coll][i].Name < registry[alg.Coll][j].Name })
}

// Algorithms lists the algorithms registered for c, by name.
func Algorithms(c Coll) []Algorithm {
	if c >= NumColls {
		return nil
	}
	return slices.Clone(registry[c])
}

func lookup(c Coll, name string) (Algorithm, bool) {
	for _, a := range registry[c] {
		if a.Name == name {
			return a, true
		}
	}
	return Algorithm{}, false
}

// Rule is one line of the default selection table: the first rule of a
// collective whose bounds hold and whose algorithm's restrictions hold
// picks the algorithm. Bounds of 0 mean "any".
type Rule struct {
	Coll     Coll
	MaxSize  int         // group size ≤ MaxSize
	MaxBytes int         // Args.TotalBytes() ≤ MaxBytes
	When     Restriction // the rule applies only where these hold
	Alg      string
}

// Select picks the algorithm for a call: the forced one if named (an error
// if it does not apply), else the first applicable rule. Selection reads
// only rank-invariant inputs, so every rank picks the same algorithm.
func Select(a *Args, force string) (Algorithm, error) {
	if force != "" {
		alg, ok := lookup(a.Coll, force)
		if !ok {
			return Algorithm{}, fmt.Errorf("%s has no algorithm %q (have %s): %w", a.Coll, force, names(a.Coll), ErrAlgorithm)
		}
		if err := alg.Requires.holds(a); err != nil {
			return Algorithm{}, fmt.Errorf("%s algorithm %s %v: %w", a.Coll, force, err, ErrAlgorithm)
		}
		return alg, nil
	}
	for _, r := range Rules {
		if r.Coll != a.Coll || r.MaxSize > 0 && a.Size > r.MaxSize || r.MaxBytes > 0 && a.TotalBytes() > r.MaxBytes || r.When.holds(a) != nil {
			continue
		}
		if alg, ok := lookup(a.Coll, r.Alg); ok && alg.Requires.holds(a) == nil {
			return alg, nil
		}
	}
	// no rule: any registered algorithm whose restrictions hold
	for _, alg := range registry[a.Coll] {
		if alg.Requires.holds(a) == nil {
			return alg, nil
		}
	}
	return Algorithm{}, fmt.Errorf("%s: no algorithm applies (have %s): %w", a.Coll, names(a.Coll), ErrAlgorithm)
}

func names(c Coll) string {
	var n []string
	for _, a := range registry[c] {
		n = append(n, a.Name)
	}
	return strings.Join(n, ", ")
}

// planKey is a plan's shape. It holds no buffer address; the op is keyed
// by identity, which is the op, not the data it reduces.
type planKey struct {
	coll                    Coll
	alg                     string
	rank, size, root, count int
	elem                    int
	typ                     uint8
	op                      any
	inPlace                 bool
	segment                 int
	remoteSize, remoteCount int
}

var planCache struct {
	sync.Mutex
	m map[planKey]*Plan
}

// maxCachedPlans bounds the cache; beyond it plans are built but not kept.
const maxCachedPlans = 4096

// Build returns the plan of alg for a, from the cache when the shape was
// seen before. Plans of v-collectives depend on their count arrays and are
// not cached.
func Build(alg Algorithm, a *Args) (*Plan, error) {
	// neighborhood plans depend on the topology, which the key leaves out
	cacheable := a.Counts == nil && a.Displs == nil && a.SendCounts == nil && a.Nbr == nil
	key := planKey{a.Coll, alg.Name, a.Rank, a.Size, a.Root, a.Count, a.ElemSize, uint8(a.Type), a.Op, a.InPlace, a.Segment, a.RemoteSize, a.RemoteCount}
	if cacheable {
		planCache.Lock()
		p := planCache.m[key]
		planCache.Unlock()
		if p != nil {
			return p, nil
		}
	}
	b := NewBuilder(a.Op, a.Type)
	tokens := addTokens(b, a, alg.DataLeads != nil && alg.DataLeads(a), alg.DataEnds != nil && alg.DataEnds(a)) // agree.go
	if err := alg.Build(b, a); err != nil {
		return nil, fmt.Errorf("%s %s: %w", a.Coll, alg.Name, err)
	}
	afterTokens(b, tokens)
	p, err := b.Plan(a.Coll.String() + "/" + alg.Name)
	if err != nil {
		return nil, err
	}
	p.Tokens = tokens
	p.run.markTrails(p.Steps, tokens)
	if cacheable {
		planCache.Lock()
		if planCache.m == nil {
			planCache.m = make(map[planKey]*Plan)
		}
		if len(planCache.m) < maxCachedPlans {
			planCache.m[key] = p
		}
		planCache.Unlock()
	}
	return p, nil
}

// ceilLog2 returns ⌈log2 n⌉ for n ≥ 1.
func ceilLog2(n int) int { return bits.Len(uint(n - 1)) }

// floorPow2 returns the largest power of two ≤ n, for n ≥ 1.
func floorPow2(n int) int { return 1 << (bits.Len(uint(n)) - 1) }
