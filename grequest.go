package meshmpi

import (
	"fmt"
	"sync"

	"github.com/meshmpi/meshmpi/peer"
)

// Generalized requests (MPI-4.1 §13.2): a request whose operation the
// program runs itself, on a goroutine or another library, and reports done
// with GrequestComplete. Wait, Test and the multiple-completion calls
// treat it as any request.
//
// The callbacks run in the caller's goroutine, in the order §13.2 gives:
//
//	Wait/Test/… that completes it   query, then free
//	Free before GrequestComplete    free, inside GrequestComplete
//	Free after GrequestComplete     free, inside Free (query is not called)
//	Cancel                          cancel(complete), complete telling whether
//	                                GrequestComplete was called already
//
// The error query or free return is the completing call's (query's first).

// GrequestQuery fills in the status of a completed generalized request:
// Source, Tag, Bytes, Cancelled (MPI_Grequest_query_function). Its error
// becomes the status's and the completing call's.
type GrequestQuery func(st *Status) error

// GrequestFree releases what the program holds for a generalized request
// (MPI_Grequest_free_function).
type GrequestFree func() error

// GrequestCancel is told that the program cancelled a generalized request
// (MPI_Grequest_cancel_function); complete says whether GrequestComplete
// was called already.
type GrequestCancel func(complete bool) error

// grequest is the operation of a generalized request.
type grequest struct {
	ep       *peer.Endpoint // woken at completion, for Waitall and friends
	queryFn  GrequestQuery
	freeFn   GrequestFree
	cancelFn GrequestCancel
	ch       chan struct{} // closed by GrequestComplete

	mu        sync.Mutex // GrequestComplete may run on another goroutine
	completed bool
	detached  bool // freed before it completed: free runs at completion
	freed     bool // the free callback ran
}

// GrequestStart starts a generalized request of c's rank
// (MPI_Grequest_start): the request is active until GrequestComplete, and
// then Wait, Test or a multiple-completion call completes it, calling query
// and free. MPI_Grequest_start has no communicator; c names the rank the
// request belongs to, whose waits it wakes. Every callback is needed: a nil
// one is ErrArg.
func GrequestStart(c *Comm, query GrequestQuery, free GrequestFree, cancel GrequestCancel) (*Request, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("grequest start: %w", err)
	}
	if query == nil || free == nil || cancel == nil {
		return nil, fmt.Errorf("grequest start: query, free and cancel are all needed (query %t, free %t, cancel %t): %w",
			query != nil, free != nil, cancel != nil, ErrArg)
	}
	g := &grequest{ep: c.p.ep, queryFn: query, freeFn: free, cancelFn: cancel, ch: make(chan struct{})}
	return &Request{wait: c.p.wait, impl: g, state: Active}, nil
}

// GrequestComplete tells the library that the operation of the generalized
// request r is done (MPI_Grequest_complete): a Wait on r returns, on any
// goroutine. It may be called after r was freed (Free), which then calls
// r's free callback here. Completing r twice, or a request that is not a
// generalized one, is ErrRequest.
func GrequestComplete(r *Request) error {
	if r == nil {
		return fmt.Errorf("grequest complete: nil request: %w", ErrRequest)
	}
	g, ok := r.impl.(*grequest)
	if !ok {
		return fmt.Errorf("grequest complete: not a generalized request: %w", ErrRequest)
	}
	g.mu.Lock()
	if g.completed {
		g.mu.Unlock()
		return fmt.Errorf("grequest complete: completed already: %w", ErrRequest)
	}
	g.completed = true
	close(g.ch)
	free := g.detached && !g.freed
	g.freed = g.freed || free
	g.mu.Unlock()
	if free {
		if err := g.freeFn(); err != nil {
			return fmt.Errorf("grequest complete: free callback of a freed request: %w", err)
		}
	}
	g.ep.Wake()
	return nil
}

func (g *grequest) start() error {
	return fmt.Errorf("start: a generalized request is not persistent: %w", ErrRequest)
}

func (g *grequest) finished() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.completed
}

func (g *grequest) done() <-chan struct{} { return g.ch }

// result calls query, then free (MPI-4.1 §13.2: free after query).
func (g *grequest) result(bool) (Status, error) {
	st := Status{Source: AnySource, Tag: AnyTag}
	err := g.queryFn(&st)
	if err != nil {
		err = fmt.Errorf("grequest query: %w", err)
	}
	g.mu.Lock()
	free := !g.freed
	g.freed = true
	g.mu.Unlock()
	if free {
		if ferr := g.freeFn(); ferr != nil && err == nil {
			err = fmt.Errorf("grequest free: %w", ferr)
		}
	}
	st.Err = err
	return st, err
}

func (g *grequest) cancel() error {
	g.mu.Lock()
	complete := g.completed
	g.mu.Unlock()
	if err := g.cancelFn(complete); err != nil {
		return fmt.Errorf("grequest cancel: %w", err)
	}
	return nil
}

// detach is Free of the active request: free runs now if the program
// completed it already, else at GrequestComplete (MPI-4.1 §13.2).
func (g *grequest) detach() error {
	g.mu.Lock()
	free := g.completed && !g.freed
	g.freed = g.freed || free
	g.detached = true
	g.mu.Unlock()
	if free {
		if err := g.freeFn(); err != nil {
			return fmt.Errorf("grequest free: %w", err)
		}
	}
	return nil
}

// release has nothing to do: result called free.
func (g *grequest) release() {}

func (g *grequest) endpoint() *peer.Endpoint { return g.ep }
