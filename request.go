package meshmpi

import (
	"context"
	"errors"
	"fmt"

	"github.com/meshmpi/meshmpi/peer"
)

// RequestState is where a Request is in its life (MPI-4.1 §3.7, §3.9).
type RequestState uint8

// Request states. A nonblocking request is born Active; a persistent one is
// born Initialized and goes Active at each Start. Wait or Test observing the
// completion moves a request to Complete, from which a persistent request
// may be started again. Free moves any request to Freed.
const (
	Initialized RequestState = iota
	Active
	Complete
	Freed
)

func (s RequestState) String() string {
	switch s {
	case Initialized:
		return "initialized"
	case Active:
		return "active"
	case Complete:
		return "complete"
	case Freed:
		return "freed"
	}
	return fmt.Sprintf("RequestState(%d)", uint8(s))
}

// operation is what a Request drives: a point-to-point operation today,
// collective schedules and generalized requests through the same methods.
type operation interface {
	start() error
	finished() bool
	// done wakes a waiter when the operation may have finished.
	done() <-chan struct{}
	// result returns the outcome of a finished operation; keep says the
	// request will start it again (persistent), so its resources stay.
	result(keep bool) (Status, error)
	cancel() error
	// detach hands an active operation its own cleanup (Free while
	// active), or refuses with ErrRequest.
	detach() error
	// release frees an inactive operation's resources.
	release()
	endpoint() *peer.Endpoint
}

// Request is a handle to a nonblocking or persistent operation (MPI_Request),
// of any kind. A Request is not safe for concurrent use by several
// goroutines, as in MPI.
type Request struct {
	state      RequestState
	persistent bool
	wait       waitPolicy // how Wait waits before it parks
	impl       operation
	st         Status
	err        error

	p2p  p2pRequest  // the operation of point-to-point requests, in the same allocation
	coll collRequest // the operation of collective requests
}

// State returns the request's state.
func (r *Request) State() RequestState { return r.state }

// Persistent reports whether the request was made by an …Init call.
func (r *Request) Persistent() bool { return r.persistent }

func (r *Request) usable(op string) error {
	if r == nil {
		return fmt.Errorf("%s: nil request: %w", op, ErrRequest)
	}
	if r.state == Freed {
		return fmt.Errorf("%s: request was freed: %w", op, ErrRequest)
	}
	return nil
}

// Start starts a persistent request that is not active (MPI_Start).
func (r *Request) Start() error {
	if err := r.usable("start"); err != nil {
		return err
	}
	if !r.persistent {
		return fmt.Errorf("start: not a persistent request: %w", ErrRequest)
	}
	if r.state == Active {
		return fmt.Errorf("start: request is already active: %w", ErrRequest)
	}
	if err := r.begin(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	r.state, r.st, r.err = Active, Status{}, nil
	return nil
}

// begin starts the operation, the rank in the library meanwhile (its
// wait policy's enter): frames that come while it starts wait for it,
// and it hands them over before it returns.
func (r *Request) begin() error {
	ep := r.impl.endpoint()
	r.wait.enter(ep)
	err := r.impl.start()
	r.wait.leave(ep)
	return err
}

// Startall starts every request (MPI_Startall). It checks them all first:
// if any cannot start, none is started.
func Startall(reqs []*Request) error {
	for i, r := range reqs {
		if err := r.usable("startall"); err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
		if !r.persistent || r.state == Active {
			return fmt.Errorf("startall: request %d is %s or not persistent: %w", i, r.state, ErrRequest)
		}
		for _, q := range reqs[:i] {
			if q == r {
				return fmt.Errorf("startall: request %d listed twice: %w", i, ErrRequest)
			}
		}
	}
	for i, r := range reqs {
		if err := r.Start(); err != nil {
			return fmt.Errorf("startall: request %d: %w", i, err)
		}
	}
	return nil
}

// finish records the completion of an active request whose operation finished.
func (r *Request) finish() {
	r.st, r.err = r.impl.result(r.persistent)
	r.state = Complete
}

// emptyStatus is the status of a wait on an inactive request (MPI-4.1
// §3.7.3): any source, any tag, nothing moved, no error.
var emptyStatus = Status{Source: AnySource, Tag: AnyTag}

// inactive returns what Wait and Test report for a request that is not
// active: a persistent request not started, or started and completed
// already, is inactive and gets the empty status (MPI-4.1 §3.7.3); a
// completed nonblocking request, which MPI would have set to
// MPI_REQUEST_NULL, gives its status again.
func (r *Request) inactive() (Status, error) {
	if r.persistent {
		return emptyStatus, nil
	}
	return r.st, r.err
}

// Wait blocks until the request completes or ctx is done, and returns its
// status (MPI_Wait). An inactive persistent request (not started, or
// completed and already waited on) returns at once with the empty status:
// AnySource, AnyTag, no count, no error. A completed nonblocking request
// returns its status again. If ctx ends first the request stays active and
// Wait returns ctx's error.
func (r *Request) Wait(ctx context.Context) (Status, error) {
	if err := r.usable("wait"); err != nil {
		return Status{}, err
	}
	if r.state != Active {
		return r.inactive()
	}
	var cancel <-chan struct{} // nil: a context that never ends
	if ctx != nil {
		cancel = ctx.Done()
	}
	if q := r.anySourceRecv(); q != nil {
		switch err := q.awaitAnySource(cancel); {
		case err == errWaitCancelled:
			return Status{}, fmt.Errorf("wait: %w", ctx.Err())
		case err != nil:
			// interrupted, still active: wait again after AckFailed
			err = fmt.Errorf("wait: %w", err)
			return Status{Err: err}, err
		}
		r.finish()
		return r.st, r.err
	}
	r.wait.wait(r.impl.endpoint(), r.impl.finished)
	if p := r.proc(); p != nil && !r.impl.finished() {
		p.park(r.block())
		defer p.unpark()
	}
	for !r.impl.finished() {
		if cancel == nil { // a plain receive parks for less than a select
			<-r.impl.done()
			continue
		}
		select {
		case <-r.impl.done():
		case <-cancel:
			return Status{}, fmt.Errorf("wait: %w", ctx.Err())
		}
	}
	r.finish()
	return r.st, r.err
}

// Test reports whether the request has completed, without blocking, and if
// so its status (MPI_Test).
func (r *Request) Test() (Status, bool, error) {
	if err := r.usable("test"); err != nil {
		return Status{}, false, err
	}
	if r.state != Active {
		st, err := r.inactive()
		return st, true, err
	}
	if !r.impl.finished() {
		if err := r.pending(); err != nil {
			err = fmt.Errorf("test: %w", err)
			return Status{Err: err}, false, err
		}
		return Status{}, false, nil
	}
	r.finish()
	return r.st, true, r.err
}

// Finished reports whether an active request's operation has finished,
// without completing the request: unlike Test it leaves the request
// active, so Wait, Test and Cancel still apply to it. (The C binding's
// buffered send gives back its buffer space once its data has left, while
// its handle may still cancel it.) A request that is not active reports
// false.
func (r *Request) Finished() bool {
	return r != nil && r.state == Active && r.impl.finished()
}

// Cancel asks to cancel an active point-to-point request (MPI_Cancel)
// and returns at once. The request must still be completed with Wait or
// Test; its Status says whether the cancel took effect. A receive that has
// not matched is cancelled. A send, of any mode, is cancelled if no
// receive has matched its message yet (MPI-4.1 §3.8.4): the receiver is
// asked to withdraw it, and the request completes with the answer, even
// if the send had finished locally (an eager message already sent); a
// matched send completes normally, not cancelled. A send to ProcNull is
// never cancelled. A second Cancel of the same start does nothing more;
// for a persistent request, Cancel applies to its active start. A link
// lost before the answer fails the send. Collectives cannot be
// cancelled: ErrRequest.
func (r *Request) Cancel() error {
	if err := r.usable("cancel"); err != nil {
		return err
	}
	if r.state != Active {
		return fmt.Errorf("cancel: request is %s: %w", r.state, ErrRequest)
	}
	return r.impl.cancel()
}

// Free releases the request (MPI_Request_free). An active point-to-point
// request, nonblocking or persistent, still runs to completion,
// unobserved (MPI-4.1 §3.7.3: a send freed while active still completes).
// An active collective cannot be freed (ErrRequest).
func (r *Request) Free() error {
	if err := r.usable("free"); err != nil {
		return err
	}
	if r.state == Active {
		if err := r.impl.detach(); err != nil {
			return err
		}
	} else {
		r.impl.release()
	}
	r.state = Freed
	return nil
}

// Waitall waits for every request (MPI_Waitall). Nil requests are skipped.
// statuses, if not nil, receives each request's status and must be as long
// as reqs. If some requests fail, the error wraps ErrInStatus and each
// failure, and their statuses carry their errors.
func Waitall(ctx context.Context, reqs []*Request, statuses []Status) error {
	if statuses != nil && len(statuses) < len(reqs) {
		return fmt.Errorf("waitall: %d statuses for %d requests: %w", len(statuses), len(reqs), ErrArg)
	}
	var errs []error
	for i, r := range reqs {
		if r == nil {
			continue
		}
		st, err := r.Wait(ctx)
		if ctx != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return fmt.Errorf("waitall: %w", err)
		}
		if statuses != nil {
			statuses[i] = st
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("request %d: %w", i, err))
		}
	}
	if errs != nil {
		return fmt.Errorf("waitall: %w: %w", ErrInStatus, errors.Join(errs...))
	}
	return nil
}

// Testall completes every request if all have completed, and reports
// whether they had (MPI_Testall); otherwise it completes none.
func Testall(reqs []*Request, statuses []Status) (bool, error) {
	if statuses != nil && len(statuses) < len(reqs) {
		return false, fmt.Errorf("testall: %d statuses for %d requests: %w", len(statuses), len(reqs), ErrArg)
	}
	for i, r := range reqs {
		if r == nil {
			continue
		}
		if err := r.usable("testall"); err != nil {
			return false, fmt.Errorf("request %d: %w", i, err)
		}
		if r.state == Active && !r.impl.finished() {
			if err := r.pending(); err != nil {
				return false, fmt.Errorf("testall: request %d: %w: %w", i, ErrInStatus, err)
			}
			return false, nil
		}
	}
	var errs []error
	for i, r := range reqs {
		if r == nil {
			continue
		}
		st, _, err := r.Test()
		if statuses != nil {
			statuses[i] = st
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("request %d: %w", i, err))
		}
	}
	if errs != nil {
		return true, fmt.Errorf("testall: %w: %w", ErrInStatus, errors.Join(errs...))
	}
	return true, nil
}

// Testany completes one completed active request, if any, and returns its
// index (MPI_Testany). With no active request it returns Undefined and true.
func Testany(reqs []*Request) (int, bool, Status, error) {
	active := false
	for i, r := range reqs {
		if r == nil {
			continue
		}
		if err := r.usable("testany"); err != nil {
			return Undefined, false, Status{}, fmt.Errorf("request %d: %w", i, err)
		}
		if r.state != Active {
			continue
		}
		active = true
		if r.impl.finished() {
			r.finish()
			return i, true, r.st, r.err
		}
		if err := r.pending(); err != nil {
			err = fmt.Errorf("testany: request %d: %w", i, err)
			return i, false, Status{Err: err}, err
		}
	}
	if !active {
		return Undefined, true, Status{}, nil
	}
	return Undefined, false, Status{}, nil
}

// Testsome completes every completed active request and returns their
// indices and statuses (MPI_Testsome). With no active request, indices is nil
// and ok false.
func Testsome(reqs []*Request) (indices []int, statuses []Status, err error) {
	var errs, pending []error
	for i, r := range reqs {
		if r == nil {
			continue
		}
		if err := r.usable("testsome"); err != nil {
			return nil, nil, fmt.Errorf("request %d: %w", i, err)
		}
		if r.state == Active && !r.impl.finished() {
			if err := r.pending(); err != nil {
				pending = append(pending, fmt.Errorf("request %d: %w", i, err))
			}
		}
		if r.state == Active && r.impl.finished() {
			r.finish()
			indices, statuses = append(indices, i), append(statuses, r.st)
			if r.err != nil {
				errs = append(errs, fmt.Errorf("request %d: %w", i, r.err))
			}
		}
	}
	if errs == nil && indices == nil {
		errs = pending // interrupted receives are reported when nothing completed
	}
	if errs != nil {
		err = fmt.Errorf("testsome: %w: %w", ErrInStatus, errors.Join(errs...))
	}
	return indices, statuses, err
}

// Waitany blocks until one active request completes and returns its index
// (MPI_Waitany). With no active request it returns Undefined at once.
func Waitany(ctx context.Context, reqs []*Request) (int, Status, error) {
	var st Status
	var err error
	idx := Undefined
	werr := waitFor(ctx, reqs, func() bool {
		var ok bool
		idx, ok, st, err = Testany(reqs)
		return ok || err != nil
	})
	if werr != nil {
		return Undefined, Status{}, fmt.Errorf("waitany: %w", werr)
	}
	return idx, st, err
}

// Waitsome blocks until at least one active request completes and completes
// all that have (MPI_Waitsome). With no active request it returns nil at once.
func Waitsome(ctx context.Context, reqs []*Request) (indices []int, statuses []Status, err error) {
	werr := waitFor(ctx, reqs, func() bool {
		indices, statuses, err = Testsome(reqs)
		if len(indices) > 0 || err != nil {
			return true
		}
		for _, r := range reqs {
			if r != nil && r.state == Active {
				return false
			}
		}
		return true
	})
	if werr != nil {
		return nil, nil, fmt.Errorf("waitsome: %w", werr)
	}
	return indices, statuses, err
}

// waitFor calls poll until it reports done, sleeping in between on the
// endpoints of the active requests, which wake it on every completion.
func waitFor(ctx context.Context, reqs []*Request, poll func() bool) error {
	if poll() {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	wake := make(chan struct{}, 1)
	var eps []*peer.Endpoint
	for _, r := range reqs {
		if r != nil && r.state == Active {
			if ep := r.impl.endpoint(); ep != nil && !containsEndpoint(eps, ep) {
				eps = append(eps, ep)
				ep.Watch(wake)
			}
		}
	}
	defer func() {
		for _, ep := range eps {
			ep.Unwatch(wake)
		}
	}()
	// poll again: a completion between the first poll and Watch woke no one
	for !poll() {
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func containsEndpoint(eps []*peer.Endpoint, ep *peer.Endpoint) bool {
	for _, e := range eps {
		if e == ep {
			return true
		}
	}
	return false
}
