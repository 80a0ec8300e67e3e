package agree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// fabric runs a group of members in one goroutine, one event at a time,
// chosen at random: deliver the head of a pair's queue, tell a member of a
// failure, start an agreement, doom a member, stop a doomed one. A doomed
// member is believed failed by the others as their notices arrive; it
// keeps acting until it stops (a false suspicion that the job fences), and
// when it stops a random tail of each of its queues is lost (a broadcast
// cut short). Messages between live members are never lost and keep their
// order per pair.
type fabric struct {
	t       *testing.T
	rng     *rand.Rand
	n       int
	rounds  int // agreements each member runs
	ahead   int // how many it may have started and not seen decided
	groups  []*Group
	queues  [][][]byte // [from*n+to]
	stopped []bool
	doomed  []bool
	notice  [][]bool // notice[s][m]: s is yet to be told m failed
	started []int
	results [][]Result
	vecs    [][][]byte // [member][round]
	kills   int        // how many members may be doomed
	crash   bool       // a doomed member stops before anyone is told
	// barrier: members start barriers (StartBarrier) and leave once
	// decided, as Finalize's ranks do: they stop, what they sent is
	// delivered, and then (Finalize lingers until the members it sent
	// to have left) the others are told as of a failure
	barrier bool
	leaving []int
	gone    []int    // left, queues still being delivered
	killed  []bool   // doomed by the random killer, not by leaving
	log     [][2]int // every message sent: from, to
	// leave: a member that started all its rounds leaves the group
	// (Leave, as a rank that frees its communicator, perhaps with an
	// agreement still pending) at a random time;
	// once Leave lets it go it takes no more messages, but it has not
	// failed: nobody is told of it
	leave       bool
	leaveCalled []bool // Leave called
	quit        []bool // Leave let it go
}

type fabricLink struct {
	f    *fabric
	from int
}

func (l fabricLink) Send(to int, msg []byte) {
	f := l.f
	if f.stopped[l.from] {
		return
	}
	f.queues[l.from*f.n+to] = append(f.queues[l.from*f.n+to], msg)
	f.log = append(f.log, [2]int{l.from, to})
}

func newFabric(t *testing.T, seed uint64, n, rounds, ahead, kills int, crash bool) *fabric {
	f := &fabric{t: t, rng: rand.New(rand.NewPCG(seed, 7)), n: n, rounds: rounds, ahead: ahead, kills: kills, crash: crash,
		groups: make([]*Group, n), queues: make([][][]byte, n*n), stopped: make([]bool, n), doomed: make([]bool, n),
		notice: make([][]bool, n), started: make([]int, n), results: make([][]Result, n), vecs: make([][][]byte, n),
		killed: make([]bool, n), leaveCalled: make([]bool, n), quit: make([]bool, n)}
	for m := range n {
		f.groups[m] = New(n, m, 42, fabricLink{f, m})
		f.notice[m] = make([]bool, n)
		f.results[m] = make([]Result, rounds)
		for range rounds {
			v := make([]byte, 8)
			for i := range v {
				v[i] = byte(f.rng.Uint32() | f.rng.Uint32())
			}
			f.vecs[m] = append(f.vecs[m], v)
		}
	}
	return f
}

func (f *fabric) decided(m int) int {
	d := 0
	for _, r := range f.results[m] {
		if r.Vec != nil || r.Err != nil {
			d++
		}
	}
	return d
}

type event struct {
	kind     int
	from, to int
}

const (
	evDeliver = iota
	evNotice
	evStart
	evDoom
	evStop
	evLeave
)

func (f *fabric) events() []event {
	var evs []event
	for from := range f.n {
		for to := range f.n {
			if len(f.queues[from*f.n+to]) > 0 {
				evs = append(evs, event{evDeliver, from, to})
			}
		}
	}
	doomed := 0
	for m := range f.n {
		if f.doomed[m] {
			doomed++
		}
		if f.stopped[m] {
			continue
		}
		for x := range f.n {
			if f.notice[m][x] {
				evs = append(evs, event{evNotice, x, m})
			}
		}
		if f.started[m] < f.rounds && f.started[m]-f.decided(m) < f.ahead {
			evs = append(evs, event{evStart, m, m})
		}
		if f.doomed[m] {
			evs = append(evs, event{evStop, m, m})
		}
		if f.leave && !f.leaveCalled[m] && f.started[m] == f.rounds {
			evs = append(evs, event{evLeave, m, m})
		}
	}
	if doomed < f.kills {
		for m := range f.n {
			if !f.doomed[m] && len(evs) > 0 && f.rng.IntN(4*f.n) == 0 {
				evs = append(evs, event{evDoom, m, m})
			}
		}
	}
	return evs
}

func (f *fabric) run() {
	for steps := 0; ; steps++ {
		require.Less(f.t, steps, 1_000_000, "the fabric did not settle")
		evs := f.events()
		if len(evs) == 0 {
			return
		}
		ev := evs[f.rng.IntN(len(evs))]
		switch ev.kind {
		case evDeliver:
			q := &f.queues[ev.from*f.n+ev.to]
			msg := (*q)[0]
			*q = (*q)[1:]
			if !f.stopped[ev.to] && !f.quit[ev.to] {
				require.NoError(f.t, f.groups[ev.to].Receive(ev.from, msg))
			}
		case evNotice:
			f.notice[ev.to][ev.from] = false
			f.groups[ev.to].Failed(ev.from)
		case evStart:
			m, k := ev.from, f.started[ev.from]
			f.started[m]++
			start := f.groups[m].Start
			if f.barrier {
				start = f.groups[m].StartBarrier
			}
			seq, err := start(f.vecs[m][k], func(r Result) {
				require.Nil(f.t, f.results[m][k].Vec, "member %d round %d decided twice", m, k)
				if r.Vec == nil {
					r.Vec = []byte{}
				}
				f.results[m][k] = r
				if f.barrier {
					f.leaving = append(f.leaving, m)
				}
			})
			require.NoError(f.t, err)
			require.Equal(f.t, uint32(k), seq)
		case evDoom:
			f.doomed[ev.from] = true
			f.killed[ev.from] = true
			for s := range f.n {
				if s != ev.from {
					f.notice[s][ev.from] = true
				}
			}
			if f.crash {
				f.stop(ev.from)
			}
		case evStop:
			f.stop(ev.from)
		case evLeave:
			m := ev.from
			f.leaveCalled[m] = true
			f.groups[m].Leave(func() { f.quit[m] = true })
		}
		for _, m := range f.leaving {
			f.doomed[m], f.stopped[m] = true, true // its queues are delivered
		}
		f.gone = append(f.gone, f.leaving...)
		f.leaving = f.leaving[:0]
		f.gone = slices.DeleteFunc(f.gone, func(m int) bool {
			for to := range f.n {
				if len(f.queues[m*f.n+to]) > 0 {
					return false
				}
			}
			for s := range f.n {
				if s != m {
					f.notice[s][m] = true
				}
			}
			return true
		})
	}
}

// stop ends member m: it acts no more, and a random tail of each of its
// queues is lost.
func (f *fabric) stop(m int) {
	if f.stopped[m] {
		return
	}
	f.stopped[m] = true
	for to := range f.n {
		q := &f.queues[m*f.n+to]
		*q = (*q)[:f.rng.IntN(len(*q)+1)]
	}
}

// check holds the agreement's properties over the members never doomed:
// each decided every round (no hang), all decided the same, the missing
// members were doomed, and the value is the AND over a set of
// contributions that includes every survivor's.
func (f *fabric) check() {
	var survivors []int
	for m := range f.n {
		if !f.doomed[m] {
			survivors = append(survivors, m)
		}
	}
	for k := range f.rounds {
		var first *Result
		all, live := bytes.Repeat([]byte{0xff}, 8), bytes.Repeat([]byte{0xff}, 8)
		for m := range f.n {
			for i := range all {
				all[i] &= f.vecs[m][k][i]
				if !f.doomed[m] {
					live[i] &= f.vecs[m][k][i]
				}
			}
		}
		for _, m := range survivors {
			r := f.results[m][k]
			require.NotNil(f.t, r.Vec, "member %d did not decide round %d", m, k)
			require.NoError(f.t, r.Err)
			require.False(f.t, r.Mismatch)
			if first == nil {
				first = &r
				for _, x := range r.Missing {
					require.True(f.t, f.doomed[x], "round %d: member %d is missing but was never doomed", k, x)
				}
				for i := range r.Vec {
					require.Equal(f.t, r.Vec[i], r.Vec[i]&live[i], "round %d: a survivor's contribution is not in the value", k)
					require.Equal(f.t, all[i], r.Vec[i]&all[i], "round %d: bits set by no contribution", k)
				}
				if !slices.Contains(f.doomed, true) {
					require.Equal(f.t, all, r.Vec)
					require.Empty(f.t, r.Missing)
				}
				continue
			}
			require.Equal(f.t, first.Vec, r.Vec, "round %d: members %d and %d disagree on the value", k, survivors[0], m)
			require.Equal(f.t, first.Missing, r.Missing, "round %d: members %d and %d disagree on the missing", k, survivors[0], m)
		}
	}
}

// TestAgreementUnderFaults runs thousands of random schedules: groups of
// 1 to 8 members, up to all but one failing during the agreements
// (coordinators mid-broadcast included), crashes and fenced false
// suspicions, blocking and pipelined agreements.
func TestAgreementUnderFaults(t *testing.T) {
	runs := testRuns("AGREE_RUNS", 4000, 400)
	for seed := range uint64(runs) {
		n := 1 + int(seed%8)
		kills := int(seed/8) % n // 0 … n-1
		crash := seed%3 != 0
		ahead := 1 + int(seed/24)%3
		t.Run(fmt.Sprintf("seed%d_n%d_kills%d_crash%v_ahead%d", seed, n, kills, crash, ahead), func(t *testing.T) {
			f := newFabric(t, seed, n, 4, ahead, kills, crash)
			f.run()
			f.check()
		})
	}
}

// Members that leave the group once their agreements are decided (their
// communicator is freed) while others, told of a failure later, still
// need a decision that only a leaving member holds (a coordinator failed
// mid-broadcast): every survivor decides every round, and every survivor
// is let go in the end.
func TestAgreementLeaveUnderFaults(t *testing.T) {
	runs := testRuns("AGREE_RUNS", 4000, 400)
	for seed := range uint64(runs) {
		n := 2 + int(seed%7)
		kills := 1 + int(seed/7)%(n-1) // 1 … n-1
		crash := seed%3 != 0
		ahead := 1 + int(seed/21)%2
		t.Run(fmt.Sprintf("seed%d_n%d_kills%d_crash%v_ahead%d", seed, n, kills, crash, ahead), func(t *testing.T) {
			f := newFabric(t, seed, n, 2, ahead, kills, crash)
			f.leave = true
			f.run()
			f.check()
			for m := range n {
				if !f.doomed[m] {
					require.True(t, f.quit[m], "member %d was never let go", m)
				}
			}
		})
	}
}

// Barriers whose members leave once decided (Finalize) end on every
// member the killer spares, even when coordinators die mid-broadcast.
func TestBarrierUnderFaults(t *testing.T) {
	runs := 4000
	if testing.Short() {
		runs = 400
	}
	for seed := range uint64(runs) {
		n := 1 + int(seed%8)
		kills := int(seed/8) % n
		f := newFabric(t, seed, n, 1, 1, kills, seed%3 != 0)
		f.barrier = true
		f.run()
		for m := range n {
			if !f.killed[m] {
				require.NotNil(t, f.results[m][0].Vec, "seed %d: member %d never left the barrier", seed, m)
			}
		}
	}
}

// Every member but one fails: the last one decides alone.
func TestAgreementLastSurvivor(t *testing.T) {
	f := newFabric(t, 1, 5, 1, 1, 0, true)
	for m := range 4 {
		f.doomed[m] = true
		f.stopped[m] = true
		f.notice[4][m] = true
	}
	f.run()
	f.check()
	require.Equal(t, []int{0, 1, 2, 3}, f.results[4][0].Missing)
	require.Equal(t, f.vecs[4][0], f.results[4][0].Vec)
}

func TestAgreementMismatch(t *testing.T) {
	f := newFabric(t, 2, 3, 1, 1, 0, true)
	f.vecs[2][0] = []byte{1, 2, 3}
	f.run()
	for m := range 3 {
		require.True(t, f.results[m][0].Mismatch, "member %d", m)
	}
}

func TestAgreementMalformedMessages(t *testing.T) {
	g := New(3, 0, 9, fabricLink{})
	good := g.encodeDec(0, 1, &decision{vec: []byte{1}, missing: []int{2}})
	gather := g.encodeUp(0, &up{era: 1, vec: []byte{1}, cover: []uint64{2}, cand: &decision{origin: 1, holder: 2, vec: []byte{3}}})
	for _, tc := range []struct {
		name string
		from int
		msg  []byte
	}{
		{"short", 1, []byte{1, 2}},
		{"bad kind", 1, append([]byte{9}, good[1:]...)},
		{"bad flags", 1, append([]byte{2, 7}, good[2:]...)},
		{"truncated", 1, good[:len(good)-1]},
		{"long", 1, append(slices.Clone(good), 0)},
		{"missing past the group", 1, append(slices.Clone(good[:len(good)-1]), 0x80)},
		{"coordinator past the group", 1, g.encodeDec(0, 3, &decision{vec: []byte{1}})},
		{"truncated gather", 1, gather[:len(gather)-1]},
		{"long gather", 1, append(slices.Clone(gather), 0)},
		{"gather for a coordinator past the group", 1, g.encodeUp(0, &up{era: 5, cover: []uint64{2}})},
		{"cover past the group", 1, func() []byte {
			b := g.encodeUp(0, &up{era: 0, cover: []uint64{2}})
			b[len(b)-1] |= 8
			return b
		}()},
		{"from itself", 0, good},
		{"from outside", 3, good},
		{"far ahead", 1, g.encodeUp(1<<20, &up{era: 0, vec: []byte{1}, cover: []uint64{2}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, g.Receive(tc.from, tc.msg), ErrMessage)
		})
	}
	require.NoError(t, g.Receive(1, gather))
	// another group's message is dropped quietly
	other := New(3, 1, 10, fabricLink{})
	require.NoError(t, g.Receive(1, other.encodeUp(0, &up{era: 0, vec: []byte{1}, cover: []uint64{2}})))
}

func TestAgreementStop(t *testing.T) {
	g := New(2, 1, 1, discard{})
	var got Result
	_, err := g.Start([]byte{1}, func(r Result) { got = r })
	require.NoError(t, err)
	g.Stop(ErrTooMany)
	require.ErrorIs(t, got.Err, ErrTooMany)
	_, err = g.Start([]byte{1}, func(Result) {})
	require.ErrorIs(t, err, ErrTooMany)
}

func TestAgreementPendingBound(t *testing.T) {
	g := New(2, 1, 1, discard{})
	for range MaxPending {
		_, err := g.Start([]byte{1}, func(Result) {})
		require.NoError(t, err)
	}
	_, err := g.Start([]byte{1}, func(Result) {})
	require.ErrorIs(t, err, ErrTooMany)
}

// A member that leaves a group that never ran an agreement goes at once
// and says nothing; one that ran agreements goes once the others left,
// and starts none meanwhile.
func TestAgreementLeave(t *testing.T) {
	f := newFabric(t, 3, 3, 1, 1, 0, false)
	went := false
	f.groups[0].Leave(func() { went = true })
	require.True(t, went)
	require.Empty(t, f.log)
	_, err := f.groups[0].Start([]byte{1}, func(Result) {})
	require.ErrorIs(t, err, ErrLeft)

	f = newFabric(t, 3, 3, 1, 1, 0, false)
	f.leave = true
	f.run()
	f.check()
	for m := range 3 {
		require.True(t, f.quit[m], "member %d was never let go", m)
		_, err := f.groups[m].Start([]byte{1}, func(Result) {})
		require.ErrorIs(t, err, ErrLeft)
	}
}

type discard struct{}

func (discard) Send(int, []byte) {}

// Larger groups, whose trees are deeper, under the same faults: up to a
// quarter of the members fail, coordinators and inner members
// mid-broadcast included.
func TestLargeGroupsUnderFaults(t *testing.T) {
	runs := 1000
	if testing.Short() {
		runs = 40
	}
	for seed := range uint64(runs) {
		n := []int{9, 16, 23, 40}[seed%4]
		kills := int(seed/4) % (n/4 + 1)
		barrier := seed%5 == 4
		t.Run(fmt.Sprintf("seed%d_n%d_kills%d_barrier%v", seed, n, kills, barrier), func(t *testing.T) {
			f := newFabric(t, seed, n, 2, 1+int(seed%2), kills, seed%3 != 0)
			if barrier {
				f.barrier, f.rounds = true, 1
			}
			f.run()
			if !barrier {
				f.check()
				return
			}
			for m := range n {
				if !f.killed[m] {
					require.NotNil(t, f.results[m][0].Vec, "member %d never left the barrier", m)
				}
			}
		})
	}
}

// Without failures an agreement is a tree's gather and broadcast: each
// member talks to its parent and children only (n-1 pairs), with one
// message each way on each, and a member's Sent names its children.
func TestAgreementTree(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8, 64, 100} {
		for _, barrier := range []bool{false, true} {
			t.Run(fmt.Sprintf("n%d_barrier%v", n, barrier), func(t *testing.T) {
				f := newFabric(t, uint64(n), n, 1, 1, 0, false)
				f.barrier = barrier
				f.run()
				if !barrier {
					f.check()
				}
				pairs := map[[2]int]int{}
				sends := 0
				for _, l := range f.log {
					pairs[[2]int{min(l[0], l[1]), max(l[0], l[1])}]++
					sends++
				}
				require.Len(t, pairs, n-1, "pairs that talked")
				require.Equal(t, 2*(n-1), sends, "messages")
				for p, k := range pairs {
					require.Equal(t, 2, k, "messages between %d and %d", p[0], p[1])
				}
				children := 0
				for m := range n {
					children += len(f.results[m][0].Sent)
				}
				require.Equal(t, n-1, children)
			})
		}
	}
}

// gateLink is a Transport whose first Send waits at a gate before it
// sends: a goroutine held up between its step and its send.
type gateLink struct {
	mu      sync.Mutex
	sent    [][]byte // what went out, in order
	entered chan struct{}
	gate    chan struct{}
	first   bool
}

func (l *gateLink) Send(_ int, msg []byte) {
	l.mu.Lock()
	first := !l.first
	l.first = true
	l.mu.Unlock()
	if first {
		close(l.entered)
		<-l.gate
	}
	l.mu.Lock()
	l.sent = append(l.sent, msg)
	l.mu.Unlock()
}

// Two steps of one member that unlock in turn send in turn: member 5
// sends its part for coordinator 0, and is held up before the send goes
// out; it learns that 0 failed, and makes its part for coordinator 1. The
// part for 1 must go out after the one for 0, or its parent (4) keeps the
// stale one, sets it aside and waits for a part that never comes again
// (the hang of examples/resilient's TestResilient/first_and_last).
func TestSendsInTurn(t *testing.T) {
	l := &gateLink{entered: make(chan struct{}), gate: make(chan struct{})}
	g := New(8, 5, 1, l)
	started := make(chan error, 1)
	go func() {
		_, err := g.Start([]byte{1}, func(Result) {})
		started <- err
	}()
	<-l.entered // the part for 0 is made, not sent
	failed := make(chan struct{})
	go func() { g.Failed(0); close(failed) }()
	select {
	case <-failed:
	case <-started:
		t.Fatal("Start returned before its send")
	}
	close(l.gate)
	require.NoError(t, <-started)
	<-failed
	l.mu.Lock()
	defer l.mu.Unlock()
	var eras []int
	for _, b := range l.sent {
		m, err := g.decode(b)
		require.NoError(t, err)
		require.NotNil(t, m.up)
		eras = append(eras, m.up.era)
	}
	require.Equal(t, []int{0, 1}, eras, "the coordinators the parts were sent for, in the order they went out")
}

// liveNet carries a group's messages between members that run on
// goroutines of their own, as ranks do: each pair's messages in order on
// a goroutine of the pair's, while members start agreements and hear of
// the victim's failure whenever their goroutines get to it. The fabric
// above runs one event at a time and cannot find faults of timing
// between a member's own goroutines (TestSendsInTurn's).
type liveNet struct {
	groups []*Group
	queues [][]chan []byte // [from][to]
	victim int
	dead   atomic.Bool   // the victim's messages are lost from now on
	stop   chan struct{} // closed at the run's end: what is sent then is lost
	sends  atomic.Uint64
}

type liveLink struct {
	net  *liveNet
	from int
}

func (l liveLink) Send(to int, msg []byte) {
	if l.from == l.net.victim && l.net.dead.Load() {
		return
	}
	// a sender is held up now and then between its step and the send,
	// as a preempted goroutine is: what another goroutine sends then
	// must not overtake it
	for range (l.net.sends.Add(1) * 0x9e3779b97f4a7c15 >> 61) % 4 {
		runtime.Gosched()
	}
	select {
	case l.net.queues[l.from][to] <- msg:
	case <-l.net.stop:
	}
}

// Members on goroutines of their own, the coordinator failing at a
// random moment of a run of agreements and the others told of it at
// random moments on goroutines of their own: every survivor decides
// every agreement, all alike (AGREE_LIVE_RUNS runs, 1,000 by default;
// the messages sent out of turn that TestSendsInTurn pins hung it within
// a few hundred).
func TestAgreementLiveMembers(t *testing.T) {
	runs := testRuns("AGREE_LIVE_RUNS", 1000, 100)
	const n, rounds = 8, 4
	for seed := range uint64(runs) {
		rng := rand.New(rand.NewPCG(seed, 7))
		net := &liveNet{groups: make([]*Group, n), queues: make([][]chan []byte, n), stop: make(chan struct{})}
		for m := range n {
			net.groups[m] = New(n, m, 1, liveLink{net, m})
			net.queues[m] = make([]chan []byte, n)
			for to := range n {
				net.queues[m][to] = make(chan []byte, 1024) // more than a run sends
			}
		}
		var delivery sync.WaitGroup
		for from := range n {
			for to := range n {
				delivery.Go(func() {
					for {
						select {
						case msg := <-net.queues[from][to]:
							if to != net.victim || !net.dead.Load() {
								_ = net.groups[to].Receive(from, msg)
							}
						case <-net.stop:
							return
						}
					}
				})
			}
		}
		dieAfter := rng.IntN(rounds + 1) // agreements the victim completes
		spins := make([]int, n)          // how long each survivor takes to hear of the failure
		for m := range spins {
			spins[m] = rng.IntN(2000)
		}
		results := make([][]Result, n)
		var members, notices sync.WaitGroup
		for m := range n {
			members.Go(func() {
				if m == net.victim {
					for range dieAfter {
						ch := make(chan Result, 1)
						if _, err := net.groups[m].Start([]byte{0xff}, func(r Result) { ch <- r }); err == nil {
							<-ch
						}
					}
					net.dead.Store(true)
					for s := range n { // each survivor hears in its own time
						if s != m {
							notices.Go(func() {
								for range spins[s] {
									runtime.Gosched()
								}
								net.groups[s].Failed(m)
							})
						}
					}
					return
				}
				for k := range rounds {
					ch := make(chan Result, 1)
					if _, err := net.groups[m].Start([]byte{^byte(1 << k)}, func(r Result) { ch <- r }); err != nil {
						t.Errorf("seed %d: member %d starts round %d: %v", seed, m, k, err)
						return
					}
					select {
					case r := <-ch:
						results[m] = append(results[m], r)
					case <-time.After(time.Minute): // hang guard
						var b strings.Builder
						for _, g := range net.groups {
							b.WriteString("\n" + g.String())
						}
						t.Errorf("seed %d: member %d waits in round %d:%s", seed, m, k, b.String())
						return
					}
				}
			})
		}
		members.Wait()
		notices.Wait()
		close(net.stop)
		delivery.Wait()
		if t.Failed() {
			return
		}
		for k := range rounds {
			first := results[1][k]
			require.NoError(t, first.Err)
			for m := 2; m < n; m++ {
				require.Equal(t, first.Vec, results[m][k].Vec, "seed %d round %d: members 1 and %d disagree", seed, k, m)
				require.Equal(t, first.Missing, results[m][k].Missing, "seed %d round %d: members 1 and %d disagree", seed, k, m)
			}
		}
	}
}

// testRuns is how many runs a randomized test makes: the environment
// variable env's number, else full, or short in -short mode.
func testRuns(env string, full, short int) int {
	if n, err := strconv.Atoi(os.Getenv(env)); err == nil {
		return n
	}
	if testing.Short() {
		return short
	}
	return full
}
