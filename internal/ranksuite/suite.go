// Package ranksuite is the rank program of meshmpi's cross-target tests
// and benchmarks. The same Go code runs as a native rank (a goroutine of
// a test or of meshbench), as a browser rank (mixedrank built for
// GOOS=js, in a run page) and as a WASI rank (mixedrank built for
// GOOS=wasip1, under wasm/host): that one MPI program runs unchanged on
// every target is the product's promise, so the tests hold every kind of
// rank to the same checks.
//
// Suite is the correctness part: point-to-point between every pair of
// ranks (so every pair of kinds in a mixed job) and a collective subset
// in its blocking, nonblocking and persistent forms, each result checked
// against a naive sequential computation from the rank numbers alone.
// Echo and Measure are the benchmark part (pair.go): one rank serves,
// the other times ping-pongs and windowed streams. Run is a rank's whole
// part of a job (task.go), shared by the program and native ranks.
package ranksuite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/meshmpi/meshmpi"
)

// RendezvousBytes is the size of the large messages: far above the eager
// limit, so they go by ready-to-send / clear-to-send over many frames.
const RendezvousBytes = 1 << 20

// waitLimit bounds every wait: a broken job fails instead of hanging.
const waitLimit = 2 * time.Minute

// Suite runs every check on world and returns the first failure.
func Suite(world *meshmpi.Comm) error {
	for _, c := range []struct {
		name string
		fn   func(*meshmpi.Comm) error
	}{
		{"progress while waiting", progress},
		{"all-pairs 8 B", func(w *meshmpi.Comm) error { return allPairs(w, 1, 21) }},
		{"all-pairs 1 MiB", func(w *meshmpi.Comm) error { return allPairs(w, RendezvousBytes/8, 22) }},
		{"ordering", ordering},
		{"any-source", anySource},
		{"ssend", ssend},
		{"blocking collectives", blocking},
		{"nonblocking collectives", nonblocking},
		{"persistent collectives", persistent},
	} {
		if err := c.fn(world); err != nil {
			return fmt.Errorf("rank %d: %s: %w", world.Rank(), c.name, err)
		}
	}
	return nil
}

// val is element i of what rank a sends (to rank b, or in block b) in
// round k: distinct for every argument, so a block that lands in the
// wrong place or a stale round shows.
func val(a, b, i, k int) int64 {
	return int64(a)*1_000_003 + int64(b)*7_919 + int64(i)*13 + int64(k)*100_000_007
}

// allPairs sends every other rank a message of count elements, all at
// once, and checks the one it receives from each: the first message
// between two ranks opens their link, so afterwards every pair of the
// job is connected.
func allPairs(w *meshmpi.Comm, count, tag int) error {
	rank, n := w.Rank(), w.Size()
	var reqs []*meshmpi.Request
	recv := make([][]int64, n)
	for p := range n {
		if p == rank {
			continue
		}
		out := make([]int64, count)
		for i := range out {
			out[i] = val(rank, p, i, tag)
		}
		recv[p] = make([]int64, count)
		r, err := meshmpi.Irecv(w, recv[p], p, tag)
		if err != nil {
			return err
		}
		s, err := meshmpi.Isend(w, out, p, tag)
		if err != nil {
			return err
		}
		reqs = append(reqs, r, s)
	}
	if err := waitall(reqs); err != nil {
		return err
	}
	for p := range n {
		for i, v := range recv[p] {
			if want := val(p, rank, i, tag); v != want {
				return fmt.Errorf("from rank %d element %d = %d, want %d", p, i, v, want)
			}
		}
	}
	return nil
}

// ordering: 20 messages to the next rank arrive in the order sent
// (non-overtaking), with eager sizes that vary.
func ordering(w *meshmpi.Comm) error {
	r, n := w.Rank(), w.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	const count = 20
	var reqs []*meshmpi.Request
	for i := range count {
		msg := make([]int32, 1+i*37)
		msg[0] = int32(i)
		req, err := meshmpi.Isend(w, msg, next, 5)
		if err != nil {
			return err
		}
		reqs = append(reqs, req)
	}
	buf := make([]int32, 1+count*37)
	for i := range count {
		st, err := meshmpi.Recv(w, buf, prev, 5)
		if err != nil {
			return err
		}
		if buf[0] != int32(i) || st.Count != 1+i*37 {
			return fmt.Errorf("message %d from rank %d: got number %d, %d elements", i, prev, buf[0], st.Count)
		}
	}
	return waitall(reqs)
}

// anySource: rank 0 receives one message from every other rank with
// AnySource and sees each sender once.
func anySource(w *meshmpi.Comm) error {
	r, n := w.Rank(), w.Size()
	if r != 0 {
		return meshmpi.Send(w, []int64{int64(r) * 1000}, 0, 7)
	}
	var seen []int
	buf := []int64{0}
	for range n - 1 {
		st, err := meshmpi.Recv(w, buf, meshmpi.AnySource, 7)
		if err != nil {
			return err
		}
		if buf[0] != int64(st.Source)*1000 {
			return fmt.Errorf("from rank %d: got %d", st.Source, buf[0])
		}
		seen = append(seen, st.Source)
	}
	slices.Sort(seen)
	for i, s := range seen {
		if s != i+1 {
			return fmt.Errorf("senders %v: want 1 … %d once each", seen, n-1)
		}
	}
	return nil
}

// ssend: a synchronous send to the previous rank completes once it is
// received.
func ssend(w *meshmpi.Comm) error {
	r, n := w.Rank(), w.Size()
	buf := []int32{-1}
	req, err := meshmpi.Irecv(w, buf, (r+1)%n, 11)
	if err != nil {
		return err
	}
	if err := meshmpi.Ssend(w, []int32{int32(r)}, (r+n-1)%n, 11); err != nil {
		return err
	}
	if err := waitall([]*meshmpi.Request{req}); err != nil {
		return err
	}
	if buf[0] != int32((r+1)%n) {
		return fmt.Errorf("got %d from rank %d", buf[0], (r+1)%n)
	}
	return nil
}

// progress checks that a rank's goroutines run while it waits: each
// rank's main goroutine blocks in Recv, and only another goroutine of the
// same rank, which can run only while the main one waits (a wasip1 guest
// or a browser rank runs one goroutine at a time and is never
// preempted), sends what the next rank's Recv waits for. A runtime whose
// waits froze the rank would leave the ring hanging until the wait limit.
func progress(w *meshmpi.Comm) error {
	r, n := w.Rank(), w.Size()
	waiting := make(chan struct{})
	sent := make(chan error, 1)
	go func() {
		<-waiting
		time.Sleep(time.Millisecond) // a timer, too, must fire while the rank waits
		sent <- meshmpi.Send(w, []int32{int32(r)}, (r+1)%n, 13)
	}()
	close(waiting)
	buf := []int32{-1}
	if _, err := meshmpi.Recv(w, buf, (r+n-1)%n, 13); err != nil {
		return err
	}
	if buf[0] != int32((r+n-1)%n) {
		return fmt.Errorf("got %d from rank %d", buf[0], (r+n-1)%n)
	}
	return <-sent
}

// PeerFails is what the ranks that survive do in a failure test: a
// barrier with everyone, then a receive from dead, which must fail with
// ErrProcFailed once dead is gone. The barrier may fail that way too:
// dead may leave as soon as its own part of the barrier is done, before
// its last messages arrive.
func PeerFails(w *meshmpi.Comm, dead int) error {
	if err := meshmpi.Barrier(w); err != nil {
		if errors.Is(err, meshmpi.ErrProcFailed) {
			return nil
		}
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req, err := meshmpi.Irecv(w, make([]byte, 8), dead, 99)
	if err != nil {
		return err
	}
	_, err = req.Wait(ctx)
	if !errors.Is(err, meshmpi.ErrProcFailed) {
		return fmt.Errorf("receive from the failed rank %d: got %v, want ErrProcFailed", dead, err)
	}
	return nil
}

func waitall(reqs []*meshmpi.Request) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	return meshmpi.Waitall(ctx, reqs, nil)
}
