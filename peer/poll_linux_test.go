//go:build linux

package peer

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var _ pollLink = (*shmLink)(nil)

// hostEndpoints makes two endpoints, ranks 0 and 1, joined by a
// same-host link made with cfg.
func hostEndpoints(t *testing.T, cfg HostConfig) (a, b *Endpoint, la, lb Link) {
	t.Helper()
	la, lb = hostPair(t, cfg)
	var err error
	a, err = NewEndpoint(Config{Rank: 0, Size: 2})
	require.NoError(t, err)
	b, err = NewEndpoint(Config{Rank: 1, Size: 2})
	require.NoError(t, err)
	require.NoError(t, a.Attach(1, la))
	require.NoError(t, b.Attach(0, lb))
	t.Cleanup(func() { a.Close(nil); b.Close(nil) })
	return a, b, la, lb
}

// waitHow is how a test waits for an operation: polling the links
// (SpinPoll, then parking), parking at once (the reader goroutine
// delivers), or each in turn.
type waitHow int

const (
	waitPoll waitHow = iota
	waitPark
	waitMixed
	// waitLocked polls as a C rank's thread does (lockedAwait): the
	// goroutine locked to its thread, SpinPoll never yielding and
	// sleeping on the thread once its budget is spent
	waitLocked
)

func (w waitHow) String() string { return [...]string{"poll", "park", "mixed", "locked"}[w] }

// await waits for op as w says, the i-th wait of its goroutine; a
// waitLocked goroutine must be locked to its thread (lockedCallersFor).
func (w waitHow) await(tb testing.TB, e *Endpoint, op *Op, i int) Result {
	tb.Helper()
	if w == waitPoll || w == waitLocked || w == waitMixed && i%2 == 0 {
		e.SpinPoll(op.Finished)
	}
	return waitTimeout(tb, op, 20*time.Second)
}

// lockedCallersFor sets SetLockedCallers as w says until the test ends.
func lockedCallersFor(t *testing.T, w waitHow) {
	if w != waitLocked {
		return
	}
	SetLockedCallers(true)
	t.Cleanup(func() { SetLockedCallers(false) })
}

// lockThread locks the goroutine to its thread if w says so (a C rank's
// calls come on such a goroutine); the returned func undoes it.
func lockThread(w waitHow) func() {
	if w != waitLocked {
		return func() {}
	}
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// Messages of every protocol (eager, rendezvous over many frames, larger
// than the ring) arrive whole and in order both ways whether the
// receivers poll the link, park while its reader delivers, or alternate,
// so the reader and the pollers hand the frames over in turns.
func TestSpinPollHostLink(t *testing.T) {
	sizes := []int{0, 8, 1000, 40 << 10, 300 << 10, 3 << 20}
	for _, ring := range []int{64 << 10, 0} {
		for _, how := range []waitHow{waitPoll, waitPark, waitMixed, waitLocked} {
			t.Run(fmt.Sprintf("ring=%d/%v", ring, how), func(t *testing.T) {
				lockedCallersFor(t, how)
				a, b, _, _ := hostEndpoints(t, HostConfig{Name: "poll test", Ring: ring})
				require.True(t, a.polls.any(), "a shared-memory link is polled")
				var wg sync.WaitGroup
				// each rank sends its messages and receives the other's,
				// the receives posted first
				run := func(e *Endpoint, peer int) {
					defer wg.Done()
					defer lockThread(how)()
					recvs := make([]*Op, len(sizes))
					bufs := make([][]byte, len(sizes))
					for i, n := range sizes {
						recvs[i], bufs[i] = e.GetOp(), make([]byte, n)
						require.NoError(t, e.StartRecv(recvs[i], peer, 3, int32(i%2), bufs[i]))
					}
					for i, n := range sizes {
						s := e.GetOp()
						require.NoError(t, e.StartSend(s, Standard, peer, 3, int32(i%2), pattern(n, 10*e.Rank()+i)))
						require.NoError(t, how.await(t, e, s, i).Err)
					}
					for i, n := range sizes {
						r := how.await(t, e, recvs[i], i)
						require.NoError(t, r.Err)
						require.Equal(t, n, r.N)
						require.True(t, bytes.Equal(pattern(n, 10*peer+i), bufs[i]), "message %d of %d bytes", i, n)
					}
				}
				wg.Add(2)
				go run(a, 1)
				go run(b, 0)
				wg.Wait()
			})
		}
	}
}

// Ping-pong where each side alternates polling and parking, many times:
// the reader parks aside while a poller polls and is re-armed when it
// leaves, and a message that comes after the poller gave up is still
// delivered (by the reader).
func TestSpinPollPingPong(t *testing.T) {
	a, b, _, _ := hostEndpoints(t, HostConfig{Name: "poll test"})
	const rounds = 2000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the echo
		defer wg.Done()
		buf := make([]byte, 64)
		for i := range rounds {
			r := b.GetOp()
			require.NoError(t, b.StartRecv(r, 0, 1, 1, buf))
			res := waitMixed.await(t, b, r, i/3)
			require.NoError(t, res.Err)
			b.PutOp(r)
			s := b.GetOp()
			require.NoError(t, b.StartSend(s, Standard, 0, 1, 2, buf[:res.N]))
			require.NoError(t, waitMixed.await(t, b, s, i).Err)
			b.PutOp(s)
		}
	}()
	out, in := make([]byte, 64), make([]byte, 64)
	for i := range rounds {
		out[0], out[63] = byte(i), byte(i>>8)
		s, r := a.GetOp(), a.GetOp()
		require.NoError(t, a.StartRecv(r, 1, 1, 2, in))
		if i%50 == 0 {
			// the echo's poller gives up (or it parked at once): its
			// reader, re-armed, delivers the message
			require.Eventually(t, func() bool { return b.pollers.Load() == 0 }, 20*time.Second, 10*time.Microsecond)
		}
		require.NoError(t, a.StartSend(s, Standard, 1, 1, 1, out))
		require.NoError(t, waitMixed.await(t, a, s, i).Err)
		res := waitMixed.await(t, a, r, i/2)
		require.NoError(t, res.Err)
		require.Equal(t, out, in[:res.N])
		a.PutOp(s)
		a.PutOp(r)
	}
	wg.Wait()
}

// Several goroutines of one rank poll at once, each receiving its own
// tag: every message arrives once, in order per tag.
func TestSpinPollConcurrentPollers(t *testing.T) {
	a, b, _, _ := hostEndpoints(t, HostConfig{Name: "poll test", Ring: 64 << 10})
	const pollers, msgs = 4, 300
	var wg sync.WaitGroup
	for k := range pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 20<<10)
			for i := range msgs {
				r := b.GetOp()
				require.NoError(t, b.StartRecv(r, 0, 0, int32(k), buf))
				res := waitPoll.await(t, b, r, i)
				require.NoError(t, res.Err)
				require.True(t, bytes.Equal(pattern(res.N, k*msgs+i), buf[:res.N]), "poller %d message %d", k, i)
				b.PutOp(r)
			}
		}()
	}
	for i := range msgs {
		for k := range pollers {
			s := a.GetOp()
			require.NoError(t, a.StartSend(s, Standard, 1, 0, int32(k), pattern((i*977+k*131)%(20<<10), k*msgs+i)))
			require.NoError(t, waitTimeout(t, s, 20*time.Second).Err)
			a.PutOp(s)
		}
	}
	wg.Wait()
}

// A receive whose goroutine polls completes with an error when the link
// closes under it: closed by the remote, the endpoint closed (here or
// there), or the remote's frames breaking the ring's rules; the poller
// never touches the unmapped rings, and the link leaves the polled set.
func TestSpinPollClose(t *testing.T) {
	for _, tc := range []struct {
		name  string
		close func(a, b *Endpoint, la, lb Link)
		want  error
	}{
		{"remote-link", func(_, _ *Endpoint, la, _ Link) { la.Close() }, ErrProcFailed},
		{"endpoint", func(_, b *Endpoint, _, _ Link) { b.Close(nil) }, ErrClosed},
		{"remote-endpoint", func(a, _ *Endpoint, _, _ Link) { a.Close(nil) }, ErrProcFailed},
		{"broken-ring", func(_, _ *Endpoint, la, _ Link) {
			// a record longer than any frame, written as the remote
			l := la.(*shmLink)
			l.wmu.Lock()
			bad := make([]byte, 64)
			bad[0], bad[1], bad[2] = 0xff, 0xff, 0x7f
			r := &l.tx
			tail := *r.tail
			copy(r.data[tail&r.mask:], bad)
			*r.tail = tail + 8 + align8(HeaderLen)
			l.wmu.Unlock()
			ring(r.sleeping)
		}, ErrProcFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, la, lb := hostEndpoints(t, HostConfig{Name: "poll test"})
			r := b.GetOp()
			require.NoError(t, b.StartRecv(r, 0, 0, 0, make([]byte, 8)))
			polling := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				close(polling)
				for !r.Finished() {
					b.SpinPoll(r.Finished)
				}
			}()
			<-polling
			require.Eventually(t, func() bool { return b.pollers.Load() > 0 }, 20*time.Second, 10*time.Microsecond, "the poller is in")
			tc.close(a, b, la, lb)
			res := waitTimeout(t, r, 20*time.Second)
			require.Error(t, res.Err)
			require.True(t, errors.Is(res.Err, tc.want) || errors.Is(res.Err, ErrClosed), "%v", res.Err)
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the poller did not return")
			}
			require.Eventually(t, func() bool { return !b.polls.any() }, 20*time.Second, time.Millisecond,
				"the link left the polled set")
		})
	}
}

// The writer reports not ready before the ring is full, so the endpoint
// keeps its frames instead of the link copying them aside: a stream of
// rendezvous messages larger than the ring passes without the overflow.
func TestHostLinkHighWater(t *testing.T) {
	a, b, la, _ := hostEndpoints(t, HostConfig{Name: "poll test", Ring: 64 << 10})
	msg := pattern(1<<20, 5)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, len(msg))
		for i := range 8 {
			r := b.GetOp()
			require.NoError(t, b.StartRecv(r, 0, 0, 0, buf))
			require.NoError(t, waitMixed.await(t, b, r, i).Err)
			require.True(t, bytes.Equal(msg, buf))
			b.PutOp(r)
		}
	}()
	l := la.(*shmLink)
	for i := range 8 {
		s := a.GetOp()
		require.NoError(t, a.StartSend(s, Standard, 1, 0, 0, msg))
		require.NoError(t, waitMixed.await(t, a, s, i).Err)
		a.PutOp(s)
	}
	wg.Wait()
	l.wmu.Lock()
	spare := len(l.spare)
	l.wmu.Unlock()
	require.Zero(t, spare, "a frame went through the overflow")
}

// SpinPoll and Poll allocate nothing, on an endpoint with a polled link
// and on one without.
func TestSpinPollAllocs(t *testing.T) {
	a, _, _, _ := hostEndpoints(t, HostConfig{Name: "poll test"})
	e, err := NewEndpoint(Config{Rank: 0, Size: 2})
	require.NoError(t, err)
	n := 0
	done := func() bool { n++; return n%200 == 0 } // a few hundred polls each
	for _, locked := range []bool{false, true} {
		SetLockedCallers(locked)
		for _, ep := range []*Endpoint{a, e} {
			require.Zero(t, testing.AllocsPerRun(100, func() {
				ep.SpinPoll(done)
				ep.Poll()
			}), "locked callers: %v", locked)
		}
	}
	SetLockedCallers(false)
	// a wait past the budget, asleep on the thread
	var bell threadBell
	k := 0
	require.Zero(t, testing.AllocsPerRun(10, func() {
		bell.wait(func() bool { k++; return k%3 == 0 })
	}))
}

// BenchmarkSpinPollPingPong measures an 8-byte message's one-way trip
// between two endpoints over a shared-memory link, each side waiting by
// polling (SpinPoll) or by parking while the link's reader delivers:
// the peer layer's share of a same-host ping-pong, both ends in this
// process.
func BenchmarkSpinPollPingPong(b *testing.B) {
	for _, how := range []waitHow{waitPoll, waitPark} {
		b.Run(how.String(), func(b *testing.B) {
			la, lb := hostPair(b, HostConfig{Name: "bench"})
			x, err := NewEndpoint(Config{Rank: 0, Size: 2})
			require.NoError(b, err)
			y, err := NewEndpoint(Config{Rank: 1, Size: 2})
			require.NoError(b, err)
			require.NoError(b, x.Attach(1, la))
			require.NoError(b, y.Attach(0, lb))
			defer func() { x.Close(nil); y.Close(nil) }()
			stop := make(chan struct{})
			echoed := make(chan struct{})
			go func() { // the echo, until a message with tag 1
				defer close(echoed)
				buf := make([]byte, 8)
				r, s := y.GetOp(), y.GetOp()
				for {
					if y.StartRecv(r, 0, 0, AnyTag, buf) != nil {
						return
					}
					if how == waitPoll {
						for !y.SpinPoll(r.Finished) {
						}
					}
					res := wait(r)
					if res.Err != nil || res.Tag == 1 {
						return
					}
					if y.StartSend(s, Standard, 0, 0, 0, buf[:res.N]) != nil {
						return
					}
					wait(s)
				}
			}()
			buf := make([]byte, 8)
			r, s := x.GetOp(), x.GetOp()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := errors.Join(x.StartRecv(r, 1, 0, 0, buf), x.StartSend(s, Standard, 1, 0, 0, buf)); err != nil {
					b.Fatal(err)
				}
				wait(s)
				if how == waitPoll {
					for !x.SpinPoll(r.Finished) {
					}
				}
				wait(r)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2/1000, "µs/one-way")
			require.NoError(b, x.StartSend(s, Standard, 1, 0, 1, nil))
			wait(s)
			close(stop)
			<-echoed
		})
	}
}

// BenchmarkSpinPollPath measures the peer layer's own work for one 8-byte
// message over a shared-memory link, without any waiting: one goroutine
// posts both receives, sends, and polls each end in turn, so the figure
// is the path's cost (Send, framing, the ring, Poll, matching,
// completion), whatever else the machine runs.
func BenchmarkSpinPollPath(b *testing.B) {
	la, lb := hostPair(b, HostConfig{Name: "bench"})
	x, err := NewEndpoint(Config{Rank: 0, Size: 2})
	require.NoError(b, err)
	y, err := NewEndpoint(Config{Rank: 1, Size: 2})
	require.NoError(b, err)
	require.NoError(b, x.Attach(1, la))
	require.NoError(b, y.Attach(0, lb))
	defer func() { x.Close(nil); y.Close(nil) }()
	// both ends poll for the whole run: the readers stand aside
	x.Polling(true)
	y.Polling(true)
	defer func() { x.Polling(false); y.Polling(false) }()
	bx, by := make([]byte, 8), make([]byte, 8)
	rx, sx, ry, sy := x.GetOp(), x.GetOp(), y.GetOp(), y.GetOp()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// (require's helpers walk the stack: not in the loop)
		if err := errors.Join(y.StartRecv(ry, 0, 0, 0, by), x.StartRecv(rx, 1, 0, 0, bx), x.StartSend(sx, Standard, 1, 0, 0, bx)); err != nil {
			b.Fatal(err)
		}
		for !ry.Finished() {
			y.Poll()
		}
		if err := y.StartSend(sy, Standard, 0, 0, 0, by); err != nil {
			b.Fatal(err)
		}
		for !rx.Finished() {
			x.Poll()
		}
		if !sx.Finished() || !sy.Finished() {
			b.Fatal("an eager send did not complete once written")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/message")
}

// BenchmarkSpinPollStream measures osu_bw's stream of 1 MiB messages
// (windows of 4) between two endpoints of this process over a
// shared-memory link, both polling, by ring size and frame cap: the
// copies into and out of the ring on two cores.
func BenchmarkSpinPollStream(b *testing.B) {
	const size, window = 1 << 20, 4
	for _, ring := range []int{1 << 20, 4 << 20, 16 << 20} {
		for _, frame := range []int{64 << 10, 256 << 10, 1 << 20} {
			if frame > ring/4 {
				continue
			}
			b.Run(fmt.Sprintf("ring=%dK/frame=%dK", ring>>10, frame>>10), func(b *testing.B) {
				la, lb := hostPair(b, HostConfig{Name: "bench", Ring: ring, MaxFrame: frame})
				x, err := NewEndpoint(Config{Rank: 0, Size: 2})
				require.NoError(b, err)
				y, err := NewEndpoint(Config{Rank: 1, Size: 2})
				require.NoError(b, err)
				require.NoError(b, x.Attach(1, la))
				require.NoError(b, y.Attach(0, lb))
				defer func() { x.Close(nil); y.Close(nil) }()
				src, dst := pattern(size, 1), make([]byte, size)
				var rs, ss [window]*Op
				for i := range window {
					rs[i], ss[i] = y.GetOp(), x.GetOp()
				}
				b.SetBytes(size * window)
				b.ResetTimer()
				for b.Loop() {
					done := make(chan error, 1)
					go func() {
						for i := range window {
							if err := y.StartRecv(rs[i], 0, 0, 0, dst); err != nil {
								done <- err
								return
							}
						}
						for i := range window {
							for !y.SpinPoll(rs[i].Finished) {
							}
						}
						done <- nil
					}()
					for i := range window {
						if err := x.StartSend(ss[i], Standard, 1, 0, 0, src); err != nil {
							b.Fatal(err)
						}
					}
					for i := range window {
						for !x.SpinPoll(ss[i].Finished) {
						}
					}
					if err := <-done; err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A locked caller whose wait outlasts SpinPoll's budget sleeps on its
// thread (the endpoint's thread bell) and wakes when the operation
// finishes, whatever finishes it: the remote's message, which the link's
// reader delivers once the caller stopped polling; the endpoint's close;
// a completion outside the endpoint that calls Wake (a collective's
// schedule). The naps are made longer than the test, so only the bell
// can wake the thread.
func TestSpinPollThreadWait(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trigger func(a, b *Endpoint, done *atomic.Bool)
		err     error // the receive's outcome
	}{
		{"message", func(_, b *Endpoint, _ *atomic.Bool) {
			s := b.GetOp()
			require.NoError(t, b.StartSend(s, Standard, 0, 0, 7, []byte("8 bytes!")))
			require.NoError(t, waitTimeout(t, s, 20*time.Second).Err)
		}, nil},
		{"close", func(a, _ *Endpoint, _ *atomic.Bool) { a.Close(nil) }, ErrClosed},
		{"wake", func(a, _ *Endpoint, done *atomic.Bool) { done.Store(true); a.Wake() }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lockedCallersFor(t, waitLocked)
			nap, most := threadNap, threadWaitMax
			threadNap, threadWaitMax = time.Hour, time.Hour
			a, b, _, _ := hostEndpoints(t, HostConfig{Name: "poll test"})
			buf := make([]byte, 8)
			r := a.GetOp()
			require.NoError(t, a.StartRecv(r, 1, 0, 7, buf))
			var done atomic.Bool
			finished := r.Finished
			if tc.name == "wake" {
				finished = done.Load
			}
			got := make(chan bool, 1)
			go func() {
				defer lockThread(waitLocked)()
				got <- a.SpinPoll(finished)
			}()
			t.Cleanup(func() { <-got; threadNap, threadWaitMax = nap, most })
			require.Eventually(t, func() bool { return a.polls.threads.waiters.Load() == 1 },
				20*time.Second, 50*time.Microsecond, "the caller sleeps on its thread")
			tc.trigger(a, b, &done)
			select {
			case ok := <-got:
				got <- ok // for the cleanup
				require.True(t, ok, "SpinPoll returns once the wait is over")
			case <-time.After(20 * time.Second):
				t.Fatal("the thread was not woken")
			}
			if tc.name != "wake" {
				res := waitTimeout(t, r, 20*time.Second)
				require.ErrorIs(t, res.Err, tc.err)
				if tc.err == nil {
					require.Equal(t, "8 bytes!", string(buf[:res.N]))
				}
			}
			require.Zero(t, a.polls.threads.waiters.Load())
		})
	}
}

// BenchmarkLockedWake measures a wake-up of a goroutine locked to its
// thread, as a C rank's calls are: two such goroutines wake each other in
// turn, each op a round trip of two wake-ups, by channels (the goroutine
// parks: its processor goes to another thread and back) or by their
// thread bells (the thread sleeps on a futex and keeps its processor's
// claim; poll_thread.go).
func BenchmarkLockedWake(b *testing.B) {
	b.Run("channel", func(b *testing.B) {
		ping, pong := make(chan struct{}), make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range ping {
				pong <- struct{}{}
			}
		}()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for b.Loop() {
			ping <- struct{}{}
			<-pong
		}
		close(ping)
	})
	b.Run("thread-bell", func(b *testing.B) {
		var bells [2]threadBell
		var turn atomic.Int64 // even: the benchmark's, odd: the echo's
		stop := int64(-1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for n := int64(1); ; n += 2 {
				for !bells[1].wait(func() bool { t := turn.Load(); return t == n || t == stop }) {
				}
				if turn.Load() == stop {
					return
				}
				turn.Store(n + 1)
				bells[0].ring()
			}
		}()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		n := int64(0)
		for b.Loop() {
			turn.Store(n + 1)
			bells[1].ring()
			n += 2
			for !bells[0].wait(func() bool { return turn.Load() == n }) {
			}
		}
		turn.Store(stop)
		bells[1].ring()
	})
}

// In a C rank's process (SetLockedCallers) a poller whose operation
// finished leaves lazily: the link's reader stays aside, its bell
// silent, for a caller that is likely back soon. If none comes, the
// reader must still take over and deliver: a message for an operation
// nobody polls for completes although every safety-net nap is an hour
// long. The ping-pong before it alternates lazy leaves with polls, as a
// program's loop of blocking calls does. A Go rank's pollers never leave
// lazily.
func TestLazyLeaveReaderTakesOver(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("pollers leave lazily only where the rank and its peer have a core each")
	}
	nap := shmNap
	shmNap = time.Hour
	t.Cleanup(func() { shmNap = nap })
	for _, w := range []waitHow{waitPoll, waitLocked} {
		t.Run(w.String(), func(t *testing.T) {
			lockedCallersFor(t, w)
			a, b, _, _ := hostEndpoints(t, HostConfig{Name: "lazy test"})
			require.Equal(t, w == waitLocked, b.polls.lazy(), "one link on a host of %d cores", runtime.NumCPU())
			buf := make([]byte, 8)
			polled := false // the last wait finished in SpinPoll
			for i := range 200 {
				r := b.GetOp()
				require.NoError(t, b.StartRecv(r, 0, 1, 1, buf))
				s := a.GetOp()
				require.NoError(t, a.StartSend(s, Standard, 1, 1, 1, []byte{byte(i)}))
				unlock := lockThread(w)
				polled = b.SpinPoll(r.Finished)
				unlock()
				require.NoError(t, waitTimeout(t, r, 20*time.Second).Err)
				require.Equal(t, byte(i), buf[0])
				require.NoError(t, waitTimeout(t, s, 20*time.Second).Err)
				a.PutOp(s)
				b.PutOp(r)
			}
			require.Zero(t, b.pollers.Load())
			if w == waitLocked {
				// (a wait that outlasted SpinPoll's budget, as on a
				// loaded machine, left eagerly)
				require.Equal(t, !polled, b.polls.eager.Load(), "the last leave was lazy")
			} else {
				require.Zero(t, b.polls.left.Load(), "a Go rank's pollers leave eagerly")
			}
			// nobody polls b from now on
			r := b.GetOp()
			require.NoError(t, b.StartRecv(r, 0, 1, 2, buf))
			s := a.GetOp()
			require.NoError(t, a.StartSend(s, Standard, 1, 1, 2, []byte{42}))
			res := waitTimeout(t, r, 20*time.Second)
			require.NoError(t, res.Err)
			require.Equal(t, byte(42), buf[0])
			require.NoError(t, waitTimeout(t, s, 20*time.Second).Err)
		})
	}
}

// A C rank that polls no more after lazy leaves, with messages that
// overflow the remote's ring and spend the eager credit, still gets them
// through: what the reader aside left waiting (frames for room, credit
// grants) moves once its nap ends, the safety-net nap an hour long.
func TestLazyLeaveSenderStopsPolling(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("pollers leave lazily only where the rank and its peer have a core each")
	}
	nap := shmNap
	shmNap = time.Hour
	t.Cleanup(func() { shmNap = nap })
	lockedCallersFor(t, waitLocked)
	a, b, _, _ := hostEndpoints(t, HostConfig{Name: "lazy test", Ring: 64 << 10, MaxFrame: 16 << 10})
	require.True(t, a.polls.lazy())
	const k, size = 32, 16 << 10 // 512 KiB: 8 rings, 2 credit windows
	msg := pattern(k*size, 3)
	got := make([]byte, len(msg))
	for i := range 5 {
		// ping-pongs: a's pollers leave lazily, and the replies that
		// come while a polls put its reader aside
		for range 50 {
			s, r := a.GetOp(), b.GetOp()
			require.NoError(t, b.StartRecv(r, 0, 1, 2, got[:8]))
			require.NoError(t, a.StartSend(s, Standard, 1, 1, 2, msg[:8]))
			a.SpinPoll(s.Finished)
			require.NoError(t, waitTimeout(t, s, 20*time.Second).Err)
			b.SpinPoll(r.Finished)
			require.NoError(t, waitTimeout(t, r, 20*time.Second).Err)
			a.PutOp(s)
			b.PutOp(r)
			s, r = b.GetOp(), a.GetOp()
			require.NoError(t, a.StartRecv(r, 1, 1, 3, got[:8]))
			require.NoError(t, b.StartSend(s, Standard, 0, 1, 3, msg[:8]))
			a.SpinPoll(r.Finished)
			require.NoError(t, waitTimeout(t, r, 20*time.Second).Err)
			require.NoError(t, waitTimeout(t, s, 20*time.Second).Err)
			b.PutOp(s)
			a.PutOp(r)
		}
		// a does not poll from here on; b does
		var ss, rs [k]*Op
		for j := range k {
			ss[j], rs[j] = a.GetOp(), b.GetOp()
			require.NoError(t, b.StartRecv(rs[j], 0, 1, 1, got[j*size:(j+1)*size]))
		}
		for j := range k {
			require.NoError(t, a.StartSend(ss[j], Standard, 1, 1, 1, msg[j*size:(j+1)*size]))
		}
		for j := range k {
			b.SpinPoll(rs[j].Finished)
			require.NoError(t, waitTimeout(t, rs[j], 20*time.Second).Err, "round %d, message %d", i, j)
			require.NoError(t, waitTimeout(t, ss[j], 20*time.Second).Err)
			a.PutOp(ss[j])
			b.PutOp(rs[j])
		}
		require.Equal(t, msg, got)
	}
}
