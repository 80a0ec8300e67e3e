package meshmpi

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lazily runs f with every in-process world wired lazily, however small.
func lazily(t testing.TB, f func()) {
	old := lazyLinksFrom
	lazyLinksFrom = 0
	defer func() { lazyLinksFrom = old }()
	f()
}

// worldLinks runs fn on an in-process world of n ranks and returns how
// many memory links the world made (n(n-1)/2 when wired up front).
func worldLinks(t *testing.T, n int, fn func(*Comm) error, opts ...Option) (int, error) {
	var w *memWorld
	runHook = func(_ []*proc, mw *memWorld) { w = mw }
	defer func() { runHook = nil }()
	err := Run(n, fn, opts...)
	if w == nil {
		return n * (n - 1) / 2, err
	}
	return w.links(), err
}

// A 1,000-rank world that talks along a ring, or runs a Barrier, opens
// O(n) links (its final barrier's included), not the n(n-1)/2 an
// up-front wiring makes.
func TestRunLinksLazily(t *testing.T) {
	const n = 1000
	for _, tc := range []struct {
		name  string
		fn    func(*Comm) error
		bound int // links
	}{
		{"ring", func(c *Comm) error {
			me, size := c.Rank(), c.Size()
			out, in := []int64{int64(me)}, make([]int64, 1)
			if _, err := Sendrecv(c, out, (me+1)%size, 0, in, (me+size-1)%size, 0); err != nil {
				return err
			}
			if in[0] != int64((me+size-1)%size) {
				return fmt.Errorf("rank %d got %d from its left", me, in[0])
			}
			return nil
		}, 3 * n},
		// a dissemination barrier's ⌈log2 n⌉ rounds: n·log n links
		{"barrier", func(c *Comm) error { return Barrier(c) }, 12 * n},
		{"nothing", func(*Comm) error { return nil }, 2 * n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			links, err := worldLinks(t, n, tc.fn, WithTimeout(2*time.Minute))
			require.NoError(t, err)
			require.LessOrEqual(t, links, tc.bound)
			t.Logf("%d ranks: %d links", n, links)
		})
	}
}

// Lazily wired worlds run the collectives and keep their semantics:
// every rank gets the reference result, at sizes where the links carry
// eager and rendezvous messages, and the ranks that dial each other at
// once end with one link a pair.
func TestRunLazyCollectives(t *testing.T) {
	lazily(t, func() {
		for _, n := range []int{2, 3, 5, 8} {
			for _, count := range []int{1, 5000, 70000} {
				t.Run(fmt.Sprintf("n%d_count%d", n, count), func(t *testing.T) {
					links, err := worldLinks(t, n, func(c *Comm) error {
						me := c.Rank()
						in := make([]int32, count)
						for i := range in {
							in[i] = int32(me + i)
						}
						sum := make([]int32, count)
						if err := Allreduce(c, in, sum, Sum); err != nil {
							return err
						}
						for i, v := range sum {
							if want := int32(n*(n-1)/2 + n*i); v != want {
								return fmt.Errorf("allreduce[%d] = %d, want %d", i, v, want)
							}
						}
						b := make([]int32, count)
						if me == n-1 {
							copy(b, in)
						}
						if err := Bcast(c, b, n-1); err != nil {
							return err
						}
						if b[count-1] != int32(n-1+count-1) {
							return fmt.Errorf("bcast got %d", b[count-1])
						}
						send, recv := make([]int32, n), make([]int32, n)
						for i := range send {
							send[i] = int32(me*n + i)
						}
						if err := Alltoall(c, send, recv); err != nil {
							return err
						}
						for i, v := range recv {
							if v != int32(i*n+me) {
								return fmt.Errorf("alltoall[%d] = %d", i, v)
							}
						}
						return Barrier(c)
					}, WithTimeout(time.Minute))
					require.NoError(t, err)
					require.LessOrEqual(t, links, n*(n-1)/2)
				})
			}
		}
	})
}

// Ranks killed at random moments during Revoke, Agree and Shrink in a
// lazily wired world: the world tells the ranks that hold no link to a
// dead rank, so no survivor hangs and they agree (killRandomly's checks).
func TestRunLazyKills(t *testing.T) {
	runs := faultRuns(30)
	if testing.Short() {
		runs = 10
	}
	lazily(t, func() {
		for run := range runs {
			seed := uint64(1000 + run)
			n := 2 + run%7
			kills := run % n
			t.Run(fmt.Sprintf("run%d_n%d_kills%d", run, n, kills), func(t *testing.T) {
				killRandomly(t, seed, n, kills)
			})
		}
	})
}

// A rank that fails in a lazily wired KeepGoing world is told to ranks
// that never talked to it: their receive from it fails instead of hanging.
func TestRunLazyFailureReachesUnlinked(t *testing.T) {
	lazily(t, func() {
		var mu sync.Mutex
		got := map[int]error{}
		err := Run(4, func(c *Comm) error {
			if c.Rank() == 3 {
				return fmt.Errorf("rank 3 gives up")
			}
			buf := make([]byte, 1)
			_, err := Recv(c, buf, 3, 0)
			mu.Lock()
			got[c.Rank()] = err
			mu.Unlock()
			return nil
		}, KeepGoing(), WithTimeout(time.Minute))
		require.ErrorContains(t, err, "rank 3 gives up")
		require.Len(t, got, 3)
		for r, err := range got {
			require.ErrorIs(t, err, ErrProcFailed, "rank %d", r)
		}
	})
}

// BenchmarkRunReady measures how long an in-process world takes to have
// every rank in its function, and the heap it holds then (ready-ms,
// heap-MiB; live-MiB after a collection), wired lazily and up front, the
// two interleaved round by round.
func BenchmarkRunReady(b *testing.B) {
	for _, n := range []int{1000} {
		for _, mode := range []string{"lazy", "upfront"} {
			b.Run(fmt.Sprintf("n%d_%s", n, mode), func(b *testing.B) {
				old := lazyLinksFrom
				if mode == "upfront" {
					lazyLinksFrom = n + 1
				}
				defer func() { lazyLinksFrom = old }()
				var ready, heap, live float64
				for range b.N {
					runtime.GC()
					var base runtime.MemStats
					runtime.ReadMemStats(&base)
					var entered atomic.Int32
					all := make(chan struct{})
					start := time.Now()
					err := Run(n, func(c *Comm) error {
						if entered.Add(1) == int32(n) {
							ready += float64(time.Since(start).Microseconds()) / 1000
							var ms runtime.MemStats
							runtime.ReadMemStats(&ms)
							heap += float64(ms.HeapAlloc-base.HeapAlloc) / (1 << 20)
							runtime.GC()
							runtime.ReadMemStats(&ms)
							live += float64(ms.HeapAlloc-base.HeapAlloc) / (1 << 20)
							close(all)
						}
						<-all
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(ready/float64(b.N), "ready-ms")
				b.ReportMetric(heap/float64(b.N), "heap-MiB")
				b.ReportMetric(live/float64(b.N), "live-MiB")
			})
		}
	}
}
