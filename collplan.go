package meshmpi

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
)

// commPlanKey is the shape of a call as a communicator sees it; with the
// communicator's rank and size it determines the plan.
type commPlanKey struct {
	coll        coll.Coll
	count, root int
	elem        int
	typ         op.Type
	op          *op.Op
	inPlace     bool
	segment     int
	algorithm   string
	remoteCount int // intercommunicators (the remote size is the communicator's)
}

// maxCommPlans bounds a communicator's plan memo.
const maxCommPlans = 256

// planned is a plan with the signature of the call it serves.
type planned struct {
	plan *coll.Plan
	sig  uint32
}

// plan returns the plan for a call: from the communicator's memo when the
// same shape was called before (no selection, no lookup in the engine's
// global cache), else selected and built. V-collectives depend on their
// count arrays and are planned every time.
func (c *Comm) plan(a *coll.Args, force string) (planned, error) {
	v := a.Counts != nil || a.SendCounts != nil
	key := commPlanKey{a.Coll, a.Count, a.Root, a.ElemSize, a.Type, a.Op, a.InPlace, a.Segment, force, a.RemoteCount}
	if !v {
		c.planMu.Lock()
		p, ok := c.plans[key]
		c.planMu.Unlock()
		if ok {
			return p, nil
		}
	}
	ac := *a // the engine keeps what it is given; a stays on the caller's stack
	alg, err := coll.Select(&ac, force)
	if err != nil {
		return planned{}, fmt.Errorf("%s on %s: %w", a.Coll, c, err)
	}
	plan, err := coll.Build(alg, &ac)
	if err != nil {
		return planned{}, fmt.Errorf("%s on %s: %w: %w", a.Coll, c, ErrArg, err)
	}
	p := planned{plan, coll.Signature(coll.InterAgreed(&ac), alg.Name)}
	if !v {
		c.planMu.Lock()
		if c.plans == nil {
			c.plans = make(map[commPlanKey]planned)
		}
		if len(c.plans) < maxCommPlans {
			c.plans[key] = p
		}
		c.planMu.Unlock()
	}
	return p, nil
}
