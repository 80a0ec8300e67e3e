package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// Message sizes that cross every protocol boundary: empty, small, the eager
// limit, one past it (rendezvous), and many frames.
var protocolSizes = []int{0, 1, 7, 4096, 8191, 8192, 8193, 100_000}

// protocolOpts makes the eager limit 8 KiB and memory frames 16 KiB, so
// protocolSizes exercise eager, rendezvous and multi-frame rendezvous.
var protocolOpts = []Option{WithEagerLimit(8192), WithFrameSize(16 << 10)}

func TestSendRecvSizes(t *testing.T) {
	for _, n := range protocolSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			world(t, 2, func(w *Comm) error {
				if w.Rank() == 0 {
					return Send(w, fill(0, 1, n), 1, 5)
				}
				got := make([]int64, n)
				st, err := Recv(w, got, 0, 5)
				if err != nil {
					return err
				}
				return errors.Join(
					expect(slices.Equal(got, fill(0, 1, n)), "payload differs"),
					expect(st.Source == 0 && st.Tag == 5 && st.Count == n && st.Bytes == 8*n, "status %+v", st))
			}, protocolOpts...)
		})
	}
}

// Non-overtaking (MPI-4.1 §3.5): messages from one sender in one context
// that a receive could match arrive in the order sent, whatever protocol
// each takes, and whether the receive is posted before or after.
func TestOrdering(t *testing.T) {
	for _, posted := range []bool{false, true} {
		t.Run(fmt.Sprintf("posted=%v", posted), func(t *testing.T) {
			world(t, 2, func(w *Comm) error {
				const rounds = 3
				if w.Rank() == 0 {
					if posted {
						if _, err := Recv(w, []byte{0}, 1, 99); err != nil { // receiver is ready
							return err
						}
					}
					for i := range rounds * len(protocolSizes) {
						if err := Send(w, fill(0, i, protocolSizes[i%len(protocolSizes)]), 1, 3); err != nil {
							return err
						}
					}
					return nil
				}
				var reqs []*Request
				bufs := make([][]int64, rounds*len(protocolSizes))
				for i := range bufs {
					bufs[i] = make([]int64, protocolSizes[i%len(protocolSizes)])
					tag := 3
					if i%2 == 1 {
						tag = AnyTag
					}
					if posted {
						r, err := Irecv(w, bufs[i], AnySource, tag)
						if err != nil {
							return err
						}
						reqs = append(reqs, r)
					}
				}
				if posted {
					if err := Send(w, []byte{1}, 0, 99); err != nil {
						return err
					}
					if err := Waitall(context.Background(), reqs, nil); err != nil {
						return err
					}
				} else {
					for i := range bufs {
						if _, err := Recv(w, bufs[i], 0, 3); err != nil {
							return err
						}
					}
				}
				for i := range bufs {
					if !slices.Equal(bufs[i], fill(0, i, len(bufs[i]))) {
						return fmt.Errorf("message %d out of order or corrupt", i)
					}
				}
				return nil
			}, protocolOpts...)
		})
	}
}

func TestWildcards(t *testing.T) {
	world(t, 4, func(w *Comm) error {
		if w.Rank() != 0 {
			return Send(w, []int32{int32(w.Rank())}, 0, 10+w.Rank())
		}
		seen := map[int]bool{}
		for _, tc := range []struct{ src, tag int }{{AnySource, 12}, {3, AnyTag}, {AnySource, AnyTag}} {
			var got [1]int32
			st, err := Recv(w, got[:], tc.src, tc.tag)
			if err != nil {
				return err
			}
			if err := expect(int(got[0]) == st.Source && st.Tag == 10+st.Source, "status %+v for payload %d", st, got[0]); err != nil {
				return err
			}
			if tc.src != AnySource && st.Source != tc.src || tc.tag != AnyTag && st.Tag != tc.tag {
				return fmt.Errorf("recv(%d, %d) matched %+v", tc.src, tc.tag, st)
			}
			seen[st.Source] = true
		}
		return expect(len(seen) == 3, "sources %v", seen)
	})
}

// A message longer than the buffer fills the buffer, reports ErrTruncate,
// and writes nothing past the buffer's end (checked through a guard zone).
func TestTruncation(t *testing.T) {
	for _, n := range []int{8, 5000, 9000, 100_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			world(t, 2, func(w *Comm) error {
				if w.Rank() == 0 {
					if err := Send(w, fill(0, 0, n), 1, 0); err != nil {
						return err
					}
					return Ssend(w, fill(0, 1, n), 1, 1)
				}
				for tag := range 2 {
					mem := make([]int64, n) // the receive gets the first half, the rest is a guard zone
					for i := range mem {
						mem[i] = -1
					}
					st, err := Recv(w, mem[:n/2], 0, tag)
					if err := expectErr(err, ErrTruncate, "recv"); err != nil {
						return err
					}
					want := fill(0, tag, n)[:n/2]
					if !slices.Equal(mem[:n/2], want) || slices.ContainsFunc(mem[n/2:], func(x int64) bool { return x != -1 }) {
						return fmt.Errorf("tag %d: truncated receive wrote wrong data or past its buffer", tag)
					}
					if st.Count != n/2 {
						return fmt.Errorf("count %d", st.Count)
					}
				}
				return nil
			}, protocolOpts...)
		})
	}
}

func TestZeroLength(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 0 {
			return errors.Join(Send[byte](w, nil, 1, 1), Ssend(w, []float64{}, 1, 2))
		}
		for tag := 1; tag <= 2; tag++ {
			st, err := Recv(w, make([]float64, 4), 0, tag)
			if err != nil {
				return err
			}
			if st.Count != 0 || st.Tag != tag {
				return fmt.Errorf("status %+v", st)
			}
		}
		return nil
	})
}

func TestSelfSend(t *testing.T) {
	for _, n := range protocolSizes {
		world(t, 1, func(w *Comm) error {
			// a rendezvous send to oneself needs the receive posted first
			got := make([]int64, n)
			r, err := Irecv(w, got, 0, 0)
			if err != nil {
				return err
			}
			if err := Send(w, fill(0, 0, n), 0, 0); err != nil {
				return err
			}
			if _, err := r.Wait(context.Background()); err != nil {
				return err
			}
			return expect(slices.Equal(got, fill(0, 0, n)), "self message of %d differs", n)
		}, protocolOpts...)
	}
}

// Ssend completes only after the receiver matched it; a small standard send
// completes before (eagerly) once the pair's link is up.
func TestSsendWaitsForMatch(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		// a lazily connected link holds sends until it connects
		if _, err := Sendrecv(w, []byte{0}, 1-w.Rank(), 3, []byte{0}, 1-w.Rank(), 3); err != nil {
			return err
		}
		if w.Rank() == 1 {
			if _, err := Recv(w, []byte{0}, 0, 2); err != nil { // the receiver starts only now
				return err
			}
			_, err1 := Recv(w, make([]byte, 4), 0, 1)
			_, err0 := Recv(w, make([]byte, 4), 0, 0)
			return errors.Join(err0, err1)
		}
		std, err := Isend(w, []byte("std"), 1, 0)
		if err != nil {
			return err
		}
		syn, err := Issend(w, []byte("sync"), 1, 1)
		if err != nil {
			return err
		}
		_, stdDone, _ := std.Test()
		_, synDone, _ := syn.Test()
		if !stdDone || synDone {
			return fmt.Errorf("before the receive: standard send complete=%v, synchronous send complete=%v", stdDone, synDone)
		}
		if err := Send(w, []byte{1}, 1, 2); err != nil {
			return err
		}
		_, err = syn.Wait(context.Background())
		return err
	})
}

func TestProbe(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 0 {
			return errors.Join(Send(w, fill(0, 0, 3), 1, 7), Send(w, fill(0, 1, 20_000), 1, 8), Send(w, []byte{1, 2, 3}, 1, 9))
		}
		st, err := w.Probe(0, 8) // blocks until the rendezvous message is announced
		if err != nil {
			return err
		}
		if n, err := GetCount[int64](st); err != nil || n != 20_000 || st.Tag != 8 || st.Source != 0 {
			return fmt.Errorf("probe: %+v count %d %v", st, n, err)
		}
		st, ok, err := w.Iprobe(AnySource, 7)
		if err != nil || !ok || st.Bytes != 24 {
			return fmt.Errorf("iprobe: %+v %v %v", st, ok, err)
		}
		// matched probe: the message leaves matching for good
		m, st, err := w.Mprobe(0, AnyTag)
		if err != nil || st.Tag != 7 {
			return fmt.Errorf("mprobe: %+v %v", st, err)
		}
		if st, ok, _ := w.Iprobe(0, 7); ok {
			return fmt.Errorf("iprobe still sees the mprobed message: %+v", st)
		}
		got := make([]int64, 3)
		if _, err := Mrecv(m, got); err != nil || !slices.Equal(got, fill(0, 0, 3)) {
			return fmt.Errorf("mrecv: %v %v", got, err)
		}
		if _, err := Mrecv(m, got); !errors.Is(err, ErrRequest) {
			return fmt.Errorf("second mrecv of one message: %v", err)
		}
		m, _, ok, err = w.Improbe(0, 8)
		if err != nil || !ok {
			return fmt.Errorf("improbe: %v %v", ok, err)
		}
		big := make([]int64, 20_000)
		r, err := Imrecv(m, big)
		if err != nil {
			return err
		}
		if _, err := r.Wait(context.Background()); err != nil || !slices.Equal(big, fill(0, 1, 20_000)) {
			return fmt.Errorf("imrecv: %v", err)
		}
		// a message that is not a whole number of elements
		st, err = w.Probe(0, 9)
		if err != nil {
			return err
		}
		if _, err := GetCount[int32](st); !errors.Is(err, ErrCount) {
			return fmt.Errorf("GetCount of 3 bytes as int32: %v", err)
		}
		_, err = Recv(w, make([]int32, 1), 0, 9)
		return expectErr(err, ErrCount, "recv of 3 bytes into int32")
	}, protocolOpts...)
}

func TestProcNull(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		st, err := Recv(w, make([]int, 3), ProcNull, 0)
		if err != nil || st.Source != ProcNull || st.Count != 0 {
			return fmt.Errorf("recv from ProcNull: %+v %v", st, err)
		}
		if err := Send(w, []int{1}, ProcNull, 0); err != nil {
			return err
		}
		r, err := Isend(w, []int{1}, ProcNull, 0)
		if err != nil {
			return err
		}
		_, err = r.Wait(context.Background())
		if err != nil {
			return err
		}
		m, st, err := w.Mprobe(ProcNull, 0)
		if err != nil || st.Source != ProcNull {
			return fmt.Errorf("mprobe ProcNull: %+v %v", st, err)
		}
		_, err = Mrecv(m, []int{0})
		return err
	})
}

func TestCancelPostedReceive(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 0 {
			if _, err := Recv(w, []byte{0}, 1, 1); err != nil { // rank 1 cancelled
				return err
			}
			return Send(w, []int{42}, 1, 0)
		}
		got := []int{0}
		r, err := Irecv(w, got, 0, 0)
		if err != nil {
			return err
		}
		if err := r.Cancel(); err != nil {
			return err
		}
		st, err := r.Wait(context.Background())
		if err != nil || !st.Cancelled {
			return fmt.Errorf("cancelled receive: %+v %v", st, err)
		}
		if err := Send(w, []byte{1}, 0, 1); err != nil {
			return err
		}
		// the message sent after the cancel goes to the next receive
		if _, err := Recv(w, got, 0, 0); err != nil || got[0] != 42 {
			return fmt.Errorf("after cancel: %v %v", got, err)
		}
		// cancelling a receive that already matched has no effect
		if err := Send(w, []int{7}, 1, 3); err != nil {
			return err
		}
		r, err = Irecv(w, got, 1, 3)
		if err != nil {
			return err
		}
		if err := r.Cancel(); err != nil {
			return err
		}
		st, err = r.Wait(context.Background())
		return errors.Join(err, expect(!st.Cancelled && got[0] == 7, "matched receive was cancelled: %+v", st))
	})
}

// Ten thousand nonblocking pairs outstanding at once, completed through
// Waitall, with the receives posted in the reverse order of the sends.
func TestManyOutstanding(t *testing.T) {
	const n = 10_000
	world(t, 2, func(w *Comm) error {
		reqs := make([]*Request, n)
		bufs := make([][]int64, n)
		var err error
		for i := range n {
			if w.Rank() == 0 {
				bufs[i] = fill(0, i, 1+i%5)
				reqs[i], err = Isend(w, bufs[i], 1, i)
			} else {
				j := n - 1 - i
				bufs[j] = make([]int64, 1+j%5)
				reqs[i], err = Irecv(w, bufs[j], 0, j)
			}
			if err != nil {
				return err
			}
		}
		if err := Waitall(context.Background(), reqs, nil); err != nil {
			return err
		}
		for i := range n {
			if !slices.Equal(bufs[i], fill(0, i, 1+i%5)) {
				return fmt.Errorf("message %d differs", i)
			}
		}
		return nil
	})
}

// A 256 MiB message travels by rendezvous straight into the posted buffer:
// while it moves, the heap grows by a small, fixed amount, not by a copy of
// the message, even though the receiver posts its receive late.
func TestLargeMessageBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("256 MiB transfer")
	}
	const size = 256 << 20
	src, dst := make([]byte, size), make([]byte, size)
	for i := 0; i < size; i += 4096 {
		src[i] = byte(i >> 12)
	}
	var before, after runtime.MemStats
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 0 {
			runtime.GC()
			runtime.ReadMemStats(&before)
			if err := Send(w, src, 1, 0); err != nil {
				return err
			}
			return nil
		}
		if _, err := w.Probe(0, 0); err != nil { // the message is unexpected
			return err
		}
		_, err := Recv(w, dst, 0, 0)
		runtime.ReadMemStats(&after)
		return err
	})
	for i := 0; i < size; i += 4096 {
		require.Equal(t, byte(i>>12), dst[i], "byte %d", i)
	}
	extra := after.TotalAlloc - before.TotalAlloc
	t.Logf("heap allocated while moving 256 MiB: %d bytes", extra)
	require.Less(t, extra, uint64(1<<20), "the transfer must not buffer the message")
}

func TestPersistentPair(t *testing.T) {
	const starts = 1000
	world(t, 2, func(w *Comm) error {
		buf := make([]int64, 64)
		var r *Request
		var err error
		if w.Rank() == 0 {
			r, err = SendInit(w, buf, 1, 4)
		} else {
			r, err = RecvInit(w, buf, 0, 4)
		}
		if err != nil {
			return err
		}
		if r.State() != Initialized || !r.Persistent() {
			return fmt.Errorf("new persistent request is %s", r.State())
		}
		for i := range starts {
			if w.Rank() == 0 {
				copy(buf, fill(0, i, len(buf))) // new data every start
			}
			if err := r.Start(); err != nil {
				return err
			}
			st, err := r.Wait(context.Background())
			if err != nil {
				return err
			}
			if w.Rank() == 1 && (!slices.Equal(buf, fill(0, i, len(buf))) || st.Count != len(buf)) {
				return fmt.Errorf("start %d received %v (%+v)", i, buf[:2], st)
			}
		}
		return r.Free()
	})
}

func TestInvalidArguments(t *testing.T) {
	world(t, 3, func(w *Comm) error {
		sub, err := w.Split(0, 0)
		if err != nil {
			return err
		}
		freed, err := w.Dup()
		if err != nil {
			return err
		}
		if err := freed.Free(); err != nil {
			return err
		}
		buf := []int{0}
		var errs []error
		for _, tc := range []struct {
			name string
			err  error
			want error
		}{
			{"send to rank -3", Send(w, buf, -3, 0), ErrRank},
			{"send to rank size", Send(w, buf, 3, 0), ErrRank},
			{"send to AnySource", Send(w, buf, AnySource, 0), ErrRank},
			{"recv from rank 7", func() error { _, err := Recv(w, buf, 7, 0); return err }(), ErrRank},
			{"send tag -1", Send(w, buf, 0, -1), ErrTag},
			{"send AnyTag", Send(w, buf, 0, AnyTag), ErrTag},
			{"recv tag -5", func() error { _, err := Recv(w, buf, 0, -5); return err }(), ErrTag},
			{"isend tag -2", func() error { _, err := Isend(w, buf, 0, -2); return err }(), ErrTag},
			{"probe rank 9", func() error { _, _, err := w.Iprobe(9, 0); return err }(), ErrRank},
			{"probe tag -9", func() error { _, _, err := w.Iprobe(0, -9); return err }(), ErrTag},
			{"send on nil comm", Send[int](nil, buf, 0, 0), ErrComm},
			{"recv on freed comm", func() error { _, err := Recv(freed, buf, 0, 0); return err }(), ErrComm},
			{"irecv on freed comm", func() error { _, err := Irecv(freed, buf, 0, 0); return err }(), ErrComm},
			{"send init on freed comm", func() error { _, err := SendInit(freed, buf, 0, 0); return err }(), ErrComm},
			{"probe on freed comm", func() error { _, _, err := freed.Iprobe(0, 0); return err }(), ErrComm},
			{"count: 3 bytes as int32", func() error {
				if err := Send(sub, []byte{1, 2, 3}, sub.Rank(), 0); err != nil {
					return err
				}
				_, err := Recv(sub, make([]int32, 2), sub.Rank(), 0)
				return err
			}(), ErrCount},
		} {
			errs = append(errs, expectErr(tc.err, tc.want, tc.name))
		}
		return errors.Join(errs...)
	})
}

// When a rank fails, the others' pending operations end with ErrProcFailed
// instead of hanging, and Run reports the failing rank's error.
func TestRankFailureAbortsWorld(t *testing.T) {
	for _, panics := range []bool{false, true} {
		boom := errors.New("boom")
		err := Run(3, func(w *Comm) error {
			switch w.Rank() {
			case 0:
				if panics {
					var m map[string]int
					m["x"]++ // a bug in the rank: a nil map write
				}
				return boom
			case 1:
				_, err := Recv(w, make([]int, 1), 0, 0) // never sent
				return expectErr(err, ErrProcFailed, "recv from the failed rank")
			default:
				_, err := Recv(w, make([]int, 1), AnySource, AnyTag)
				return expectErr(err, ErrProcFailed, "wildcard recv")
			}
		})
		require.Error(t, err)
		if panics {
			require.Contains(t, err.Error(), "rank 0: panic")
		} else {
			require.ErrorIs(t, err, boom)
		}
		require.NotContains(t, err.Error(), "rank 1:")
		require.NotContains(t, err.Error(), "rank 2:")
	}
}

// Several goroutines of one rank send and receive at once (a hammer test).
func TestHammerConcurrentRank(t *testing.T) {
	const workers, msgs = 8, 100
	world(t, 2, func(w *Comm) error {
		errs := make(chan error, workers)
		for g := range workers {
			go func() {
				for i := range msgs {
					size := protocolSizes[(g+i)%len(protocolSizes)]
					if w.Rank() == 0 {
						if err := Send(w, fill(g, i, size), 1, g); err != nil {
							errs <- err
							return
						}
					} else {
						got := make([]int64, size)
						if _, err := Recv(w, got, 0, g); err != nil || !slices.Equal(got, fill(g, i, size)) {
							errs <- fmt.Errorf("worker %d message %d: %v", g, i, err)
							return
						}
					}
				}
				errs <- nil
			}()
		}
		var all []error
		for range workers {
			all = append(all, <-errs)
		}
		return errors.Join(all...)
	}, protocolOpts...)
}

func TestSendrecvReplace(t *testing.T) {
	world(t, 5, func(w *Comm) error {
		next, prev := (w.Rank()+1)%5, (w.Rank()+4)%5
		buf := fill(w.Rank(), 0, 3000)
		st, err := SendrecvReplace(w, buf, next, 1, prev, 1)
		if err != nil {
			return err
		}
		return expect(st.Source == prev && slices.Equal(buf, fill(prev, 0, 3000)), "ring shift got %+v", st)
	}, protocolOpts...)
}

func TestSingletonInit(t *testing.T) {
	t.Setenv("MESHMPI_SIGNAL", "")
	global.mu.Lock() // MPI allows one Init per process; tests run this more than once with -count
	global.p, global.finalized = nil, false
	global.mu.Unlock()
	w, err := Init()
	require.NoError(t, err)
	require.Equal(t, 0, w.Rank())
	require.Equal(t, 1, w.Size())
	require.NoError(t, Send(w, []float32{1.5}, 0, 0))
	got := []float32{0}
	_, err = Recv(w, got, 0, 0)
	require.NoError(t, err)
	require.Equal(t, float32(1.5), got[0])
	_, err = Init()
	require.ErrorIs(t, err, ErrArg, "a second Init")
	require.NoError(t, Finalize())
	require.ErrorIs(t, Finalize(), ErrArg)
	require.ErrorIs(t, Send(w, got, 0, 0), ErrComm, "after Finalize")
}
