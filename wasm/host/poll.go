//go:build !js && !wasip1

package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// Why poll_oneoff is replaced.
//
// A wasip1 Go program parks a goroutine that reads an empty socket and,
// once none is runnable, asks poll_oneoff which descriptors became
// readable (the runtime's netpoll_wasip1.go), first without a timeout,
// then until its next timer. wazero v1.12's poll_oneoff does not poll
// sockets: it reports every non-blocking descriptor ready at once (and
// sleeps a clock subscription's whole timeout only when nothing else was
// asked). So a rank waiting for its host never sleeps: the runtime's
// non-blocking netpoll(0) "finds" the stream readable, the read fails
// with EAGAIN, the goroutine parks again, round after round — measured
// in BenchmarkRelay, some 2,300 poll/read pairs per 1 MiB message, a
// whole core spinning that the host's pion stack and the other ranks
// needed.
//
// The replacement answers for connected sockets from their real state:
// it peeks one byte with wazero's own sock_recv (the guest's descriptor
// table is wazero's, so asking through its function is the only way to
// reach the socket), and when none is readable it sleeps until the host
// rings the guest's bell (it wrote to the stream, or closed it), the
// clock subscription's timeout passes, or the run's context ends.
//
// Write subscriptions are answered too: wazero reports them as errors
// (ENOTSUP), which the Go runtime takes for an error on the descriptor, so
// the guest's next read of its stream failed with "not pollable" and the
// rank lost every link (seen when the host read slowly under load: a
// guest only waits to write when its socket's send buffer is full). A
// socket's writability cannot be peeked, so a write subscription is
// reported ready: at once the first time, then, while the guest keeps
// asking, after a wait that doubles from ringEcho to bellNap/4 (the host
// drains the stream as fast as it can; the wait only keeps a guest
// blocked on a full buffer from spinning).
//
// A call with a relative clock alone (the Go runtime's sleep, when no
// goroutine waits for a descriptor) sleeps here too, so that the run's
// end wakes it (see "Stopping a guest").
// Anything else (no bell in the context, a descriptor that is not a
// connected socket, an absolute clock) goes to wazero's poll_oneoff
// unchanged.

// Stopping a guest.
//
// A guest that computes without calling its host (no allocation, no
// clock, no I/O: a Go loop, which never yields in wasm) must still stop
// when its run ends, and must come back to Go now and then, since the
// garbage collector's stop-the-world waits for every goroutine, and one
// in machine code cannot be preempted. wazero's termination checks
// (WithCloseOnContextDone) do both by leaving the machine code for Go at
// every loop iteration; profiled in BenchmarkRelay's 8-byte ping-pong
// they were the largest single cost of the guest's side, some 20-25 µs
// of CPU per round trip. A Go guest's loops count down a budget instead
// and call sched_yield (guestYield) when it runs out (loopbudget.go,
// "Why loops count down a budget"); modules the rewriter does not handle
// keep wazero's checks (TestStop's "spin" stops either way). The host
// functions a Go guest calls all the time check too: this poll_oneoff
// (where a waiting rank sleeps), clock_time_get, fd_read, fd_write and
// sched_yield close the module with wazero's exit code for the run's end
// and unwind the guest (as proc_exit does), so a waiting guest stops at
// once.

// WASI preview 1 layouts (snapshot-01 "subscription" and "event").
const (
	subSize   = 48 // userdata u64, tag u8, then the union at 8+8
	eventSize = 32 // userdata u64, errno u16, type u8, fd_readwrite
	wasiClock = 0  // eventtype clock
	wasiRead  = 1  // eventtype fd_read
	wasiWrite = 2  // eventtype fd_write
	wasiAgain = 6  // errno EAGAIN
	wasiBadf  = 8  // errno EBADF
	peekFlag  = 1  // riflags recv_peek
)

// bellNap bounds one sleep of a waiting guest. The host rings after
// every write, so this is only a safety net: loopback TCP normally
// queues the bytes at the receiver before write returns, but softirq
// work deferred to ksoftirqd can land them a little later than the
// ring (measured: a few dozen times per 300 MiB relayed on a loaded
// machine). After a ring that found no byte the guest therefore looks
// again after ringEcho, doubling up to bellNap/4; an idle guest wakes
// every bellNap for one peek.
const (
	bellNap  = 2 * time.Millisecond
	ringEcho = 20 * time.Microsecond
)

// bell is how the host wakes its guest from poll_oneoff: one per guest
// instance, carried to the host functions in the instantiation context.
type bell struct {
	c chan struct{} // cap 1: a ring while no one sleeps is kept
	// the sleeping guest's timer and its calls' stack: a guest runs one
	// goroutine at a time, so polling allocates nothing
	timer *time.Timer
	stack [6]uint64
	// writeWait is how long the next poll with a write subscription
	// waits before it reports the write ready; doubled by every such
	// poll, cleared by a poll without one
	writeWait time.Duration
	// done is the run's context's: the guest's host calls stop it once
	// closed (withBell)
	done <-chan struct{}
	// stream, once the relay runs, reads what the guest wrote to its
	// stream, on the guest's goroutine (stream.go): it takes the bytes
	// of the guest's writes from its memory, or drains the socket after
	// wazero's fd_write put them there
	stream atomic.Pointer[streamReader]
	// streamFD is the guest's descriptor of its stream, plus one (0: not
	// known yet): the first it writes to that is not stdio, its join (a
	// guest has no other socket to write to)
	streamFD atomic.Uint32
	// budget is the guest's loop budget (loopbudget.go), nil in a
	// module without one; budgetMu orders the host's writes to it (the
	// guest's own are its machine code's)
	budget   api.MutableGlobal
	budgetMu sync.Mutex
	// iovs is the guest's fd_write's or fd_read's iovecs, as slices of
	// its memory (the guest's goroutine only, one call at a time)
	iovs [][]byte
	// pull, once the relay runs, is its queue of messages for the guest,
	// which the guest's fd_read copies into its memory itself (guestRead)
	pull atomic.Pointer[outQueue]
	// hostClosed is set just before the host closes its end of the
	// stream: until then, once the guest pulls, its socket holds nothing
	// for it to read, and a read of an empty queue is EAGAIN without a
	// syscall (guestRead, poller.poll); from then on the socket says the
	// stream ended
	hostClosed atomic.Bool
}

// refill sets the guest's loop budget to n iterations: loopBudget when
// it ran out, 1 to have the guest call its host at its next iteration.
func (b *bell) refill(n uint64) {
	if b.budget == nil {
		return
	}
	b.budgetMu.Lock()
	b.budget.Set(n)
	b.budgetMu.Unlock()
}

type bellKey struct{}

func newBell() *bell {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &bell{c: make(chan struct{}, 1), timer: t}
}

// ring wakes the guest if it sleeps, or makes its next sleep return.
func (b *bell) ring() {
	select {
	case b.c <- struct{}{}:
	default:
	}
}

// withBell makes the guest instantiated with ctx wake on b, and stop
// once ctx ends.
func withBell(ctx context.Context, b *bell) context.Context {
	b.done = ctx.Done()
	return context.WithValue(ctx, bellKey{}, b)
}

// stopIfDone ends the guest's run if its context ended (see "Stopping a
// guest"): it closes the module with
// the exit code wazero's own checks would have used and unwinds the
// guest, as proc_exit does.
func stopIfDone(ctx context.Context, mod api.Module, b *bell) {
	if b == nil || b.done == nil {
		return
	}
	select {
	case <-b.done:
	default:
		return
	}
	code := sys.ExitCodeContextCanceled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		code = sys.ExitCodeDeadlineExceeded
	}
	_ = mod.CloseWithExitCode(ctx, code)
	panic(sys.NewExitError(code))
}

// checked is a WASI function of wazero's that first stops the guest if
// its run ended.
type checked struct{ std api.GoModuleFunction }

func (c checked) Call(ctx context.Context, mod api.Module, stack []uint64) {
	b, _ := ctx.Value(bellKey{}).(*bell)
	stopIfDone(ctx, mod, b)
	c.std.Call(ctx, mod, stack)
}

// guestWrite is wazero's fd_write, checked; a write to the guest's
// stream, once the relay reads it, goes to the relay straight from the
// guest's memory (stream.go's take), or, when the relay cannot take it
// now, to the socket, which the relay then drains.
type guestWrite struct{ std api.GoModuleFunction }

func (c guestWrite) Call(ctx context.Context, mod api.Module, stack []uint64) {
	b, _ := ctx.Value(bellKey{}).(*bell)
	stopIfDone(ctx, mod, b)
	fd := api.DecodeU32(stack[0])
	if b == nil || fd <= 2 { // stdio, or no rank
		c.std.Call(ctx, mod, stack)
		return
	}
	b.streamFD.CompareAndSwap(0, fd+1)
	s := b.stream.Load()
	if s != nil && b.streamFD.Load() == fd+1 && b.take(mod, s, stack) {
		return
	}
	if s != nil {
		s.inSocket.Store(true)
	}
	c.std.Call(ctx, mod, stack)
	if s != nil {
		s.drain()
	}
}

// take hands the stream's reader the bytes of the guest's fd_write(fd,
// iovs, iovs_len, result.nwritten) in place of the socket, and answers
// the call as wazero's would (all written); false leaves the call to
// wazero (the reader cannot take them now, or the iovecs are not in the
// guest's memory, which wazero's fd_write reports).
func (b *bell) take(mod api.Module, s *streamReader, stack []uint64) bool {
	mem := mod.Memory()
	iovs, n, result := api.DecodeU32(stack[1]), api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
	b.iovs = b.iovs[:0]
	total := uint64(0)
	for i := range n {
		ptr, ok1 := mem.ReadUint32Le(iovs + 8*i)
		size, ok2 := mem.ReadUint32Le(iovs + 8*i + 4)
		p, ok3 := mem.Read(ptr, size)
		if !ok1 || !ok2 || !ok3 {
			return false
		}
		if total+uint64(size) > math.MaxUint32 {
			return false // more than a write can report: wazero's fd_write refuses it
		}
		b.iovs = append(b.iovs, p)
		total += uint64(size)
	}
	if _, ok := mem.Read(result, 4); !ok || !s.take(b.iovs) {
		clear(b.iovs) // keep no view of the guest's memory
		return false
	}
	clear(b.iovs)
	mem.WriteUint32Le(result, uint32(total))
	stack[0] = 0 // ESUCCESS
	return true
}

// guestRead is wazero's fd_read, checked; a read of the guest's stream,
// once the relay's queue is the guest's to pull, copies the queue into
// the guest's memory (see "Why the guest pulls its messages"); the
// socket then answers only when the queue is empty: EAGAIN, or the
// stream's end.
type guestRead struct {
	std api.GoModuleFunction
	p   *poller
}

func (c guestRead) Call(ctx context.Context, mod api.Module, stack []uint64) {
	b, _ := ctx.Value(bellKey{}).(*bell)
	stopIfDone(ctx, mod, b)
	var q *outQueue
	if b != nil {
		q = b.pull.Load()
	}
	if q == nil || b.streamFD.Load() != api.DecodeU32(stack[0])+1 {
		c.std.Call(ctx, mod, stack)
		return
	}
	params := [4]uint64(stack[:4])
	if b.pullInto(mod, q, stack) {
		return
	}
	if !b.hostClosed.Load() && !q.pending() {
		stack[0] = wasiAgain // the socket holds nothing: no syscall to say so
		return
	}
	c.p.streamLooks.Add(1)
	c.std.Call(ctx, mod, stack)
	if stack[0] != 0 {
		return // EAGAIN, or the stream failed
	}
	// the stream's end, or nothing: the relay may have queued its last
	// messages and closed the stream after the queue was found empty,
	// and those come first
	if n, ok := mod.Memory().ReadUint32Le(api.DecodeU32(params[3])); ok && n == 0 {
		copy(stack, params[:])
		if !b.pullInto(mod, q, stack) {
			stack[0] = 0
		}
	}
}

// pullInto answers the guest's fd_read(fd, iovs, iovs_len,
// result.nread) from the queue, as wazero's would; false when the queue
// is empty or the iovecs are not in the guest's memory.
func (b *bell) pullInto(mod api.Module, q *outQueue, stack []uint64) bool {
	mem := mod.Memory()
	iovs, n, result := api.DecodeU32(stack[1]), api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
	if _, ok := mem.Read(result, 4); !ok || !q.pending() {
		return false
	}
	b.iovs = b.iovs[:0]
	for i := range n {
		ptr, ok1 := mem.ReadUint32Le(iovs + 8*i)
		size, ok2 := mem.ReadUint32Le(iovs + 8*i + 4)
		p, ok3 := mem.Read(ptr, size)
		if !ok1 || !ok2 || !ok3 {
			clear(b.iovs)
			return false
		}
		b.iovs = append(b.iovs, p)
	}
	k := q.pullInto(b.iovs)
	clear(b.iovs)
	if k == 0 {
		return false
	}
	mem.WriteUint32Le(result, uint32(k))
	stack[0] = 0 // ESUCCESS
	return true
}

// guestYield is WASI's sched_yield, which a budgeted guest also calls
// when its loop budget runs out (loopbudget.go): the guest is back in
// Go here, where the runtime may stop the world; it stops if its run
// ended, and gets a new budget.
type guestYield struct{}

func (guestYield) Call(ctx context.Context, mod api.Module, stack []uint64) {
	b, _ := ctx.Value(bellKey{}).(*bell)
	stopIfDone(ctx, mod, b)
	if b != nil {
		b.refill(loopBudget)
	}
	stack[0] = 0 // ESUCCESS
}

// checkedCalls are the WASI functions that stop a guest whose run ended,
// besides poll_oneoff: those a Go guest calls often.
var checkedCalls = []string{"clock_time_get", "fd_read", "fd_write"}

// instantiateWASI instantiates wazero's WASI functions with poll_oneoff
// replaced (see "Why poll_oneoff is replaced"). wazero documents the
// override: functions exported after NewFunctionExporter's replace its
// own; its implementations are reached through the definitions of a
// compiled, never instantiated, copy of its module.
// stock keeps wazero's behaviour, only counting the calls.
func instantiateWASI(ctx context.Context, rt wazero.Runtime, stock bool) (*poller, error) {
	std, err := wasi_snapshot_preview1.NewBuilder(rt).Compile(ctx)
	if err != nil {
		return nil, err
	}
	defer std.Close(ctx)
	defs := std.ExportedFunctions()
	fn := func(name string) api.GoModuleFunction {
		if d, ok := defs[name]; ok {
			f, _ := d.GoFunction().(api.GoModuleFunction)
			return f
		}
		return nil
	}
	p := &poller{std: fn("poll_oneoff"), recv: fn("sock_recv"), stock: stock}
	if p.std == nil || p.recv == nil {
		return nil, fmt.Errorf("wazero's WASI module has no Go poll_oneoff or sock_recv to build on")
	}
	b := rt.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	for _, name := range checkedCalls {
		f := fn(name)
		if f == nil {
			return nil, fmt.Errorf("wazero's WASI module has no Go %s to build on", name)
		}
		d := defs[name]
		var g api.GoModuleFunction = checked{f}
		switch name {
		case "fd_write":
			g = guestWrite{f}
		case "fd_read":
			g = guestRead{f, p}
		}
		b.NewFunctionBuilder().
			WithGoModuleFunction(g, d.ParamTypes(), d.ResultTypes()).
			WithParameterNames(d.ParamNames()...).
			WithResultNames(d.ResultNames()...).
			Export(name)
	}
	i32 := api.ValueTypeI32
	b.NewFunctionBuilder().
		WithGoModuleFunction(guestYield{}, nil, []api.ValueType{i32}).
		WithResultNames("errno").
		Export("sched_yield")
	b.NewFunctionBuilder().
		WithGoModuleFunction(p, []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("in", "out", "nsubscriptions", "result.nevents").
		WithResultNames("errno").
		Export("poll_oneoff")
	if _, err = b.Instantiate(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// poller is the replacement poll_oneoff; std and recv are wazero's
// poll_oneoff and sock_recv.
type poller struct {
	std, recv api.GoModuleFunction
	stock     bool
	calls     atomic.Int64 // for the benchmarks: polls per operation show a spin
	sleeps    atomic.Int64 // times a guest went to sleep waiting, for the tests
	// streamLooks counts the syscalls that read or peek a pulling
	// guest's stream socket, for the tests: none while the host's end
	// is open (bell.hostClosed)
	streamLooks atomic.Int64
}

// Call implements api.GoModuleFunction: poll_oneoff(in, out,
// nsubscriptions, result.nevents) → errno.
func (p *poller) Call(ctx context.Context, mod api.Module, stack []uint64) {
	p.calls.Add(1)
	b, _ := ctx.Value(bellKey{}).(*bell)
	stopIfDone(ctx, mod, b)
	if b == nil || p.stock || !p.poll(ctx, mod, stack, b) {
		p.std.Call(ctx, mod, stack)
	}
	stopIfDone(ctx, mod, b) // the run may have ended while the guest slept
}

// poll serves a call made of read subscriptions on connected sockets and
// at most one relative clock; it returns false for any other call,
// having written only into the events buffer, which wazero's
// poll_oneoff clears first.
func (p *poller) poll(ctx context.Context, mod api.Module, stack []uint64, b *bell) bool {
	in, out := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	n, nevents := api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
	mem := mod.Memory()
	if n == 0 || n > 1<<16 || mem == nil {
		return false
	}
	subs, ok1 := mem.Read(in, n*subSize)
	evs, ok2 := mem.Read(out, n*eventSize)
	if !ok1 || !ok2 {
		return false
	}
	var (
		clock   = -1 // index of the clock subscription
		timeout time.Duration
		reads   int
		writes  int
	)
	for i := range int(n) {
		s := subs[i*subSize:]
		switch s[8] {
		case wasiClock:
			// id u32 at 16, timeout u64 at 24, precision at 32, flags u16 at 40
			if clock >= 0 || binary.LittleEndian.Uint16(s[40:]) != 0 {
				return false
			}
			clock, timeout = i, time.Duration(binary.LittleEndian.Uint64(s[24:]))
		case wasiRead:
			reads++
		case wasiWrite:
			writes++
		default:
			return false
		}
	}
	if reads == 0 && writes == 0 {
		return clock >= 0 && n == 1 && p.sleep(ctx, mod, stack, subs, evs, timeout, b)
	}
	start := time.Now()
	writeAt := start.Add(b.writeWait)
	if writes == 0 {
		b.writeWait = 0
	} else {
		b.writeWait = min(max(2*b.writeWait, ringEcho), bellNap/4)
	}
	// The events buffer is the guest's scratch until events are written:
	// the peek's iovec, its one byte and its two results go there. Peek
	// every socket first, so a descriptor that is not one goes to wazero
	// before anything is decided.
	var ready [8]bool
	if n > uint32(len(ready)) {
		return false // the Go runtime's rank polls one or two descriptors
	}
	deadline := start.Add(timeout)
	var soon time.Duration // after a ring that found nothing: look again soon
	for {
		some := false
		writable := writes > 0 && !time.Now().Before(writeAt)
		for i := range int(n) {
			s := subs[i*subSize:]
			switch s[8] {
			case wasiRead:
				fd := binary.LittleEndian.Uint32(s[16:])
				q := b.pull.Load()
				stream := q != nil && b.streamFD.Load() == fd+1
				if stream && q.pending() {
					ready[i] = true // queued for the guest to pull
					break
				}
				if stream && !b.hostClosed.Load() {
					ready[i] = false // nothing queued, and the socket holds nothing
					break
				}
				if stream {
					p.streamLooks.Add(1)
				}
				r, ok := p.peek(ctx, mod, b, out, fd)
				if !ok {
					return false
				}
				ready[i] = r
			case wasiWrite:
				ready[i] = writable
			default:
				continue
			}
			some = some || ready[i]
		}
		expired := clock >= 0 && !time.Now().Before(deadline)
		if some || expired || ctx.Err() != nil {
			clear(evs)
			k := uint32(0)
			for i := range int(n) {
				s := subs[i*subSize:]
				if ready[i] || (i == clock && expired) {
					e := evs[k*eventSize:]
					copy(e[:8], s[:8]) // userdata
					e[10] = s[8]       // type
					k++
				}
			}
			if !mem.WriteUint32Le(nevents, k) {
				return false
			}
			stack[0] = 0
			return true
		}
		nap := bellNap
		if soon > 0 {
			nap = soon
		}
		if clock >= 0 {
			nap = min(nap, time.Until(deadline))
		}
		if writes > 0 {
			nap = min(nap, time.Until(writeAt))
		}
		p.sleeps.Add(1)
		b.timer.Reset(nap)
		select {
		case <-b.c:
			soon = ringEcho
		case <-b.timer.C:
			if soon *= 2; soon > bellNap/4 {
				soon = 0
			}
		case <-ctx.Done():
		}
		b.timer.Stop()
	}
}

// sleep serves a call of one relative clock: it waits out the timeout
// or the run's end, whichever comes first (Call then stops the guest).
func (p *poller) sleep(ctx context.Context, mod api.Module, stack []uint64, subs, evs []byte, timeout time.Duration, b *bell) bool {
	if timeout > 0 {
		b.timer.Reset(timeout)
		select {
		case <-b.timer.C:
		case <-b.done:
		}
		b.timer.Stop()
	}
	clear(evs)
	copy(evs[:8], subs[:8]) // userdata
	evs[10] = wasiClock
	if !mod.Memory().WriteUint32Le(api.DecodeU32(stack[3]), 1) {
		return false
	}
	stack[0] = 0
	return true
}

// peek reports whether the connected socket fd has a byte to read (or
// its end or an error to report: a read will not block); ok is false
// when fd is not a connected socket.
func (p *poller) peek(ctx context.Context, mod api.Module, b *bell, scratch, fd uint32) (ready, ok bool) {
	mem := mod.Memory()
	// iovec{buf: scratch+8, len: 1} at scratch; ro_datalen at +12, ro_flags at +16
	if !mem.WriteUint32Le(scratch, scratch+8) || !mem.WriteUint32Le(scratch+4, 1) {
		return false, false
	}
	st := &b.stack
	*st = [6]uint64{uint64(fd), uint64(scratch), 1, peekFlag, uint64(scratch + 12), uint64(scratch + 16)}
	p.recv.Call(ctx, mod, st[:])
	switch api.DecodeU32(st[0]) {
	case 0:
		return true, true // a byte, or the end of the stream
	case wasiAgain:
		return false, true
	case wasiBadf: // not a connected socket (a listener, a file)
		return false, false
	default:
		return true, true // the read reports it
	}
}
