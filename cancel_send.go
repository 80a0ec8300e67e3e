package meshmpi

import (
	"fmt"

	"github.com/meshmpi/meshmpi/peer"
)

// Cancelling a send (MPI_Cancel, MPI-4.1 §3.8.4): the endpoint asks the
// receiver to withdraw the message while no receive has matched it
// (peer.Endpoint.CancelSend). The answer comes on a second Op, q.cop; the
// request completes only when both the send and the answer have, so an
// eager send that finished locally still waits for it.

// cancelSend starts the cancel of an active send request. A send to
// ProcNull has no message and completes uncancelled; a second cancel of
// the same start is the first one.
func (q *p2pRequest) cancelSend() error {
	if q.rank == ProcNull || q.op == nil || q.cop != nil {
		return nil
	}
	ep := q.c.p.ep
	cop := ep.GetOp()
	if err := ep.CancelSend(cop, q.op); err != nil {
		ep.PutOp(cop)
		return fmt.Errorf("cancel send to rank %d, tag %d, on %s: %w", q.rank, q.tag, q.c, err)
	}
	q.cop = cop
	return nil
}

// cancelResult folds the cancel's answer into the send's result res and
// returns the cancel's Op to the pool. A cancelled send moved nothing; a
// cancel that failed (its link was lost before the answer came) fails
// the send with that error, since the message's fate is unknown.
func (q *p2pRequest) cancelResult(res peer.Result) peer.Result {
	cr := q.cop.Result()
	q.c.p.ep.PutOp(q.cop)
	q.cop = nil
	switch {
	case res.Err != nil:
	case cr.Err != nil:
		res.Err, res.N = cr.Err, 0
	case cr.Cancelled || res.Cancelled:
		res.Cancelled, res.N = true, 0
	}
	return res
}

// dropCancel lets go of a pending cancel: detached (Free of an active
// request), it goes back to the pool once answered.
func (q *p2pRequest) dropCancel(detach bool) {
	if q.cop == nil {
		return
	}
	if detach {
		q.c.p.ep.Detach(q.cop)
	} else {
		q.c.p.ep.PutOp(q.cop)
	}
	q.cop = nil
}
