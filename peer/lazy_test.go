package peer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// memDialer connects endpoints with memory links on demand, one link per
// pair whichever side dials first, and counts the links it made.
type memDialer struct {
	mu    sync.Mutex
	eps   []*Endpoint
	pairs map[[2]int][2]Link // ends, indexed by the lower rank first
	fail  map[int]bool       // ranks that cannot be reached
}

type dialFrom struct {
	d    *memDialer
	rank int
}

func (f dialFrom) Dial(_ context.Context, to int) (Link, error) {
	d := f.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail[to] {
		return nil, errors.New("unreachable")
	}
	lo, hi := min(f.rank, to), max(f.rank, to)
	ends, ok := d.pairs[[2]int{lo, hi}]
	if !ok {
		a, b := NewMemoryLinks(0)
		ends = [2]Link{a, b}
		d.pairs[[2]int{lo, hi}] = ends
		// the remote accepts: it gets its end attached now
		remote := ends[0]
		if to == hi {
			remote = ends[1]
		}
		if err := d.eps[to].Attach(f.rank, remote); err != nil {
			return nil, err
		}
	}
	if f.rank == lo {
		return ends[0], nil
	}
	return ends[1], nil
}

func lazyWorld(t *testing.T, n int, unreachable ...int) ([]*Endpoint, *memDialer) {
	t.Helper()
	d := &memDialer{pairs: map[[2]int][2]Link{}, fail: map[int]bool{}}
	for _, r := range unreachable {
		d.fail[r] = true
	}
	for r := range n {
		e, err := NewEndpoint(Config{Rank: r, Size: n, Dialer: dialFrom{d, r}})
		require.NoError(t, err)
		require.NoError(t, e.Attach(r, NewLoopbackLink(0)))
		d.eps = append(d.eps, e)
	}
	t.Cleanup(func() {
		for _, e := range d.eps {
			e.Close(nil)
		}
	})
	return d.eps, d
}

// A ring exchange over lazy links opens one link per neighbour pair: at
// most two per rank, not N-1.
func TestLazyRing(t *testing.T) {
	const n = 8
	eps, d := lazyWorld(t, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r, e := range eps {
		wg.Go(func() {
			next, prev := (r+1)%n, (r+n-1)%n
			got := make([]byte, 100_000) // rendezvous: the link must exist for the data phase
			recv, send := e.GetOp(), e.GetOp()
			if err := e.StartRecv(recv, prev, 0, 1, got); err != nil {
				errs[r] = err
				return
			}
			msg := make([]byte, len(got))
			msg[0], msg[len(msg)-1] = byte(r), byte(r)
			if err := e.StartSend(send, Standard, next, 0, 1, msg); err != nil {
				errs[r] = err
				return
			}
			res := wait(recv)
			errs[r] = errors.Join(res.Err, wait(send).Err)
			if res.Err == nil && (got[0] != byte(prev) || got[len(got)-1] != byte(prev)) {
				errs[r] = fmt.Errorf("rank %d got %d from %d", r, got[0], prev)
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Len(t, d.pairs, n, "one link per neighbour pair")
}

// Both ends of a pair send their first message at the same moment: one
// link serves both, and both messages arrive.
func TestLazyGlare(t *testing.T) {
	for range 50 {
		eps, d := lazyWorld(t, 2)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for r, e := range eps {
			wg.Go(func() {
				send, recv := e.GetOp(), e.GetOp()
				got := make([]byte, 1)
				_ = e.StartRecv(recv, 1-r, 0, 0, got)
				_ = e.StartSend(send, Standard, 1-r, 0, 0, []byte{byte(10 + r)})
				errs[r] = errors.Join(wait(send).Err, wait(recv).Err)
				if errs[r] == nil && got[0] != byte(11-r) {
					errs[r] = fmt.Errorf("rank %d got %d", r, got[0])
				}
			})
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		require.Len(t, d.pairs, 1)
	}
}

// A rank that cannot be reached fails the operations waiting on it with
// ErrProcFailed, and those posted after.
func TestLazyDialFailure(t *testing.T) {
	eps, _ := lazyWorld(t, 3, 2)
	e := eps[0]
	recv := e.GetOp()
	require.NoError(t, e.StartRecv(recv, 2, 0, 0, make([]byte, 4))) // no link yet: posted
	send := e.GetOp()
	require.NoError(t, e.StartSend(send, Standard, 2, 0, 0, []byte{1}))
	require.ErrorIs(t, wait(send).Err, ErrProcFailed)
	require.ErrorIs(t, wait(recv).Err, ErrProcFailed)
	later := e.GetOp()
	require.NoError(t, e.StartRecv(later, 2, 0, 0, make([]byte, 4)))
	require.ErrorIs(t, wait(later).Err, ErrProcFailed)
	// rank 1 is still fine
	ok, got := e.GetOp(), eps[1].GetOp()
	buf := make([]byte, 1)
	require.NoError(t, eps[1].StartRecv(got, 0, 0, 0, buf))
	require.NoError(t, e.StartSend(ok, Standard, 1, 0, 0, []byte{7}))
	require.NoError(t, wait(got).Err)
	require.Equal(t, byte(7), buf[0])
}

// A closed endpoint makes no link and sends nothing: a send to a rank it
// never linked to fails with the close's cause without dialing (an
// in-process world's dialer links at once, whatever its context says:
// a rank of an aborted world sent to a rank that had failed, and the
// send succeeded), and an eager send to a linked rank is not taken.
func TestClosedEndpointSendsNothing(t *testing.T) {
	eps, d := lazyWorld(t, 3)
	// rank 0 links to rank 1 only
	s, r := eps[0].GetOp(), eps[1].GetOp()
	require.NoError(t, eps[1].StartRecv(r, 0, 0, 1, make([]byte, 8)))
	require.NoError(t, eps[0].StartSend(s, Standard, 1, 0, 1, make([]byte, 8)))
	require.NoError(t, wait(s).Err)
	require.NoError(t, wait(r).Err)

	cause := fmt.Errorf("world aborted by rank 2: %w", ErrProcFailed)
	eps[0].Close(cause)
	for _, dst := range []int{1, 2} {
		sent, err := eps[0].SendEager(dst, 0, 1, make([]byte, 8))
		require.False(t, sent, "eager send to rank %d after close", dst)
		require.NoError(t, err)
		op := eps[0].GetOp()
		require.NoError(t, eps[0].StartSend(op, Standard, dst, 0, 1, make([]byte, 8)))
		require.ErrorIs(t, wait(op).Err, cause, "send to rank %d after close", dst)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	require.Len(t, d.pairs, 1, "a closed endpoint dialed")
}
