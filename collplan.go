package meshmpi

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
)

// commPlanKey is the shape of a call as a communicator sees it; with the
// communicator's rank and size it determines the plan. Every collective
// call hashes it, so it is plain memory with no padding and no string,
// which the map hashes and compares in one pass each: the small fields
// share one word (shape), a forced algorithm's name is its number in
// forcedNames. (With a string field the lookup cost about twice as many
// instructions, some 230 per call, even with no name.)
type commPlanKey struct {
	count, root int
	elem        int
	segment     int
	remoteCount int // intercommunicators (the remote size is the communicator's)
	shape       uint64
	op          *op.Op
	// layout is a hash of a v-collective's count and displacement
	// arrays (vLayout), 0 for the others; the entry keeps the arrays to
	// tell a collision from a hit
	layout uint64
}

// shape packs a call's collective, element type, in-place flag and forced
// algorithm (forcedID) into commPlanKey.shape.
func shape(a *coll.Args, forced int32) uint64 {
	var in uint64
	if a.InPlace {
		in = 1
	}
	return uint64(a.Coll) | uint64(a.Type)<<8 | in<<16 | uint64(forced)<<32
}

// forcedNames interns the algorithm names that calls forced and that
// selected an algorithm, so plan keys hold a number instead of a string:
// registered names only, so the list stays short. Copied on write; read
// with no lock.
var forcedNames atomic.Pointer[[]string]

// forcedID returns name's number in forcedNames: 0 for no name, -1 for a
// name not interned yet.
func forcedID(name string) int32 {
	if name == "" {
		return 0
	}
	if l := forcedNames.Load(); l != nil {
		if i := slices.Index(*l, name); i >= 0 {
			return int32(i + 1)
		}
	}
	return -1
}

func internForced(name string) int32 {
	for {
		old := forcedNames.Load()
		var l []string
		if old != nil {
			if i := slices.Index(*old, name); i >= 0 {
				return int32(i + 1)
			}
			l = slices.Clone(*old)
		}
		l = append(l, name)
		if forcedNames.CompareAndSwap(old, &l) {
			return int32(len(l))
		}
	}
}

// maxCommPlans bounds a communicator's plan memo.
const maxCommPlans = 256

// planEntry is a memoized plan with its key; entries are never changed
// once made, so lastPlan can share them without a lock.
type planEntry struct {
	key commPlanKey
	p   planned
	// v holds a v-collective's arrays, the engine's own copies, which
	// its plan was built from
	v *vArrays
}

// vArrays are the count and displacement arrays of a v-collective.
type vArrays struct{ counts, displs, sendCounts, sendDispls []int }

func (v *vArrays) of(a *coll.Args) bool {
	return slices.Equal(v.counts, a.Counts) && slices.Equal(v.displs, a.Displs) &&
		slices.Equal(v.sendCounts, a.SendCounts) && slices.Equal(v.sendDispls, a.SendDispls)
}

// vLayout hashes a v-collective's arrays (FNV-1a over their values and
// lengths): nonzero, so it cannot be mistaken for no arrays.
func vLayout(a *coll.Args) uint64 {
	h := uint64(14695981039346656037)
	for _, l := range [...][]int{a.Counts, a.Displs, a.SendCounts, a.SendDispls} {
		h = (h ^ uint64(len(l))) * 1099511628211
		for _, x := range l {
			h = (h ^ uint64(x)) * 1099511628211
		}
	}
	return h | 1
}

// maxVPlans bounds the v-collective plans a communicator's memo keeps, so
// a program whose counts change at every call leaves room for its other
// shapes.
const maxVPlans = maxCommPlans / 2

// planned is a plan with the signature of the call it serves, and, when
// the communicator's memo holds it, an idle Run kept for this
// communicator (nil otherwise).
type planned struct {
	plan *coll.Plan
	sig  uint32
	runs *coll.RunCache
}

// getRun returns an idle Run of the plan bound to t.
func (p planned) getRun(t coll.Transport, tag uint32, w coll.Waker) *coll.Run {
	if p.runs != nil {
		return p.runs.Get(p.plan, t, tag, w)
	}
	return p.plan.GetRun(t, tag, w)
}

// putRun gives back a finished Run from getRun.
func (p planned) putRun(r *coll.Run) {
	if p.runs != nil {
		p.runs.Put(r)
		return
	}
	p.plan.PutRun(r)
}

// plan returns the plan for a call: from the communicator's memo when the
// same shape was called before (no selection, no lookup in the engine's
// global cache), else selected and built. A v-collective's shape includes
// its count and displacement arrays: the memo compares them, and keeps
// copies of its own (the caller may change its arrays after the call).
func (c *Comm) plan(a *coll.Args, force string) (planned, error) {
	v := a.Counts != nil || a.SendCounts != nil
	forced := forcedID(force)
	key := commPlanKey{count: a.Count, root: a.Root, elem: a.ElemSize, segment: a.Segment, remoteCount: a.RemoteCount, shape: shape(a, forced), op: a.Op}
	if v {
		key.layout = vLayout(a)
	}
	if forced >= 0 {
		if e := c.lastPlan.Load(); e != nil && e.key == key && (!v || e.v.of(a)) {
			return e.p, nil
		}
		c.planMu.Lock()
		e := c.plans[key]
		c.planMu.Unlock()
		if e != nil && (!v || e.v.of(a)) {
			c.lastPlan.Store(e)
			return e.p, nil
		}
	}
	ac := *a // the engine keeps what it is given; a stays on the caller's stack
	var va *vArrays
	if v {
		va = &vArrays{slices.Clone(a.Counts), slices.Clone(a.Displs), slices.Clone(a.SendCounts), slices.Clone(a.SendDispls)}
		ac.Counts, ac.Displs, ac.SendCounts, ac.SendDispls = va.counts, va.displs, va.sendCounts, va.sendDispls
	}
	alg, err := coll.Select(&ac, force)
	if err != nil {
		return planned{}, fmt.Errorf("%s on %s: %w", a.Coll, c, err)
	}
	plan, err := coll.Build(alg, &ac)
	if err != nil {
		return planned{}, fmt.Errorf("%s on %s: %w: %w", a.Coll, c, ErrArg, err)
	}
	p := planned{plan: plan, sig: coll.Signature(coll.InterAgreed(&ac), alg.Name)}
	if forced < 0 { // a name that selected an algorithm: worth a number
		key.shape = shape(a, internForced(force))
	}
	c.planMu.Lock()
	if c.plans == nil {
		c.plans = make(map[commPlanKey]*planEntry)
	}
	// a v-collective's entry replaces one whose arrays merely collided
	_, collided := c.plans[key]
	if collided && v || len(c.plans) < maxCommPlans && (!v || c.vPlansLocked() < maxVPlans) {
		p.runs = new(coll.RunCache)
		e := &planEntry{key: key, p: p, v: va}
		c.plans[key] = e
		c.lastPlan.Store(e)
	}
	c.planMu.Unlock()
	return p, nil
}

// vPlansLocked counts the v-collective plans in the memo (on a miss only,
// which builds a plan anyway). Called with planMu held.
func (c *Comm) vPlansLocked() int {
	n := 0
	for _, e := range c.plans {
		if e.v != nil {
			n++
		}
	}
	return n
}
