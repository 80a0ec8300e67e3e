// Package ranktest is the rank program the WASI tests run in every rank
// of a mixed job, wazero guests and native ranks alike: point-to-point
// and a collective subset, each result checked against a sequential
// reference computed from the rank numbers alone.
package ranktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/meshmpi/meshmpi"
)

// RendezvousBytes is the large message's size: far above the eager limit,
// so it goes by ready-to-send / clear-to-send over many frames.
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
		{"ordering", ordering},
		{"any-source", anySource},
		{"rendezvous", rendezvous},
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

// rendezvous: partners (0,1), (2,3) … swap a 1 MiB message.
func rendezvous(w *meshmpi.Comm) error {
	r, n := w.Rank(), w.Size()
	partner := r ^ 1
	if partner >= n {
		return nil
	}
	out, in := make([]byte, RendezvousBytes), make([]byte, RendezvousBytes)
	for i := range out {
		out[i] = byte(i*7 + r)
	}
	if _, err := meshmpi.Sendrecv(w, out, partner, 9, in, partner, 9); err != nil {
		return err
	}
	for i := range in {
		if in[i] != byte(i*7+partner) {
			return fmt.Errorf("byte %d from rank %d: got %d, want %d", i, partner, in[i], byte(i*7+partner))
		}
	}
	return nil
}

// ssend: a synchronous send to the previous rank completes once it is
// received.
func ssend(w *meshmpi.Comm) error {
	r, n := w.Rank(), w.Size()
	req, err := meshmpi.Irecv(w, make([]int32, 1), (r+1)%n, 11)
	if err != nil {
		return err
	}
	if err := meshmpi.Ssend(w, []int32{int32(r)}, (r+n-1)%n, 11); err != nil {
		return err
	}
	return waitall([]*meshmpi.Request{req})
}

// input is rank r's element i in round k: distinct per rank, element
// and round.
func input(r, i, k int) int64 { return int64(r*1000 + i*7 + k*100000) }

// sumOf is Allreduce(Sum)'s reference: the sum over ranks, sequentially.
func sumOf(n, count, k int) []int64 {
	want := make([]int64, count)
	for r := range n {
		for i := range want {
			want[i] += input(r, i, k)
		}
	}
	return want
}

func inputs(r, count, k int) []int64 {
	v := make([]int64, count)
	for i := range v {
		v[i] = input(r, i, k)
	}
	return v
}

// gathered is Allgather's reference.
func gathered(n, count, k int) []int64 {
	var v []int64
	for r := range n {
		v = append(v, inputs(r, count, k)...)
	}
	return v
}

func check(what string, got, want []int64) error {
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: got %v…, want %v…", what, got[:min(4, len(got))], want[:min(4, len(want))])
	}
	return nil
}

// counts are the vector lengths: one element, and one past the eager limit.
var counts = []int{1, 9000}

func blocking(w *meshmpi.Comm) error {
	r, n := w.Rank(), w.Size()
	for _, count := range counts {
		got := make([]int64, count)
		if err := meshmpi.Allreduce(w, inputs(r, count, 0), got, meshmpi.Sum); err != nil {
			return err
		}
		if err := check("allreduce", got, sumOf(n, count, 0)); err != nil {
			return err
		}
		buf := make([]int64, count)
		if r == n-1 {
			copy(buf, inputs(r, count, 1))
		}
		if err := meshmpi.Bcast(w, buf, n-1); err != nil {
			return err
		}
		if err := check("bcast", buf, inputs(n-1, count, 1)); err != nil {
			return err
		}
		all := make([]int64, n*count)
		if err := meshmpi.Allgather(w, inputs(r, count, 2), all); err != nil {
			return err
		}
		if err := check("allgather", all, gathered(n, count, 2)); err != nil {
			return err
		}
		if err := meshmpi.Barrier(w); err != nil {
			return err
		}
	}
	return nil
}

func nonblocking(w *meshmpi.Comm) error {
	r, n := w.Rank(), w.Size()
	for _, count := range counts {
		sum, all, buf := make([]int64, count), make([]int64, n*count), make([]int64, count)
		if r == 0 {
			copy(buf, inputs(0, count, 3))
		}
		// all four outstanding at once
		a, err1 := meshmpi.Iallreduce(w, inputs(r, count, 3), sum, meshmpi.Sum)
		b, err2 := meshmpi.Ibcast(w, buf, 0)
		c, err3 := meshmpi.Iallgather(w, inputs(r, count, 3), all)
		d, err4 := meshmpi.Ibarrier(w)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return err
		}
		if err := waitall([]*meshmpi.Request{d, c, b, a}); err != nil {
			return err
		}
		if err := errors.Join(check("iallreduce", sum, sumOf(n, count, 3)),
			check("ibcast", buf, inputs(0, count, 3)), check("iallgather", all, gathered(n, count, 3))); err != nil {
			return err
		}
	}
	return nil
}

func persistent(w *meshmpi.Comm) error {
	r, n := w.Rank(), w.Size()
	const count = 300
	in, sum, all, buf := make([]int64, count), make([]int64, count), make([]int64, n*count), make([]int64, count)
	a, err1 := meshmpi.AllreduceInit(w, in, sum, meshmpi.Sum)
	b, err2 := meshmpi.BcastInit(w, buf, 1%n)
	c, err3 := meshmpi.AllgatherInit(w, in, all)
	d, err4 := meshmpi.BarrierInit(w)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return err
	}
	reqs := []*meshmpi.Request{a, b, c, d}
	for k := 10; k < 13; k++ { // inputs change every round
		copy(in, inputs(r, count, k))
		if r == 1%n {
			copy(buf, inputs(r, count, k))
		}
		if err := meshmpi.Startall(reqs); err != nil {
			return err
		}
		if err := waitall(reqs); err != nil {
			return err
		}
		if err := errors.Join(check("allreduce init", sum, sumOf(n, count, k)),
			check("bcast init", buf, inputs(1%n, count, k)), check("allgather init", all, gathered(n, count, k))); err != nil {
			return fmt.Errorf("round %d: %w", k, err)
		}
	}
	for _, q := range reqs {
		if err := q.Free(); err != nil {
			return err
		}
	}
	return nil
}

func waitall(reqs []*meshmpi.Request) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	return meshmpi.Waitall(ctx, reqs, nil)
}

// PeerFails is what the ranks that survive do in the failure test: a
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

// progress checks that a rank's goroutines run while it waits: each
// rank's main goroutine blocks in Recv, and only another goroutine of the
// same rank, which can run only while the main one waits (a wasip1 guest
// runs one goroutine at a time and is never preempted), sends what the
// next rank's Recv waits for. A runtime whose waits froze the guest would
// leave the ring hanging until the wait limit.
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

// Tags of the echo protocol the relay benchmarks drive.
const (
	TagPing = iota // echo the message back
	TagSink        // take the message, answer nothing
	TagSync        // answer an empty message: every earlier one arrived
	TagStop        // return
)

// Echo serves the benchmarks' driver at rank from until it says stop.
func Echo(w *meshmpi.Comm, from int) error {
	buf := make([]byte, RendezvousBytes)
	for {
		st, err := meshmpi.Recv(w, buf, from, meshmpi.AnyTag)
		if err != nil {
			return err
		}
		switch st.Tag {
		case TagPing:
			err = meshmpi.Send(w, buf[:st.Count], from, TagPing)
		case TagSync:
			err = meshmpi.Send(w, buf[:0], from, TagSync)
		case TagStop:
			return nil
		}
		if err != nil {
			return err
		}
	}
}
