//go:build linux

package peer

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// A shared-memory link joins two processes of one host as MPICH's shm
// transport and UCX's posix transport do: one ring per direction in a
// mapping both processes share (a file in /dev/shm, unlinked as soon as it
// is open, whose descriptor goes to the peer over the unix socket of the
// handshake: link_shm_setup_linux.go), a frame copied once into the ring
// by the writer and handed to the reader's handler straight from it.
//
// Each end has one reader goroutine. It spins (yielding the processor
// after it hands frames over, so the goroutines they woke run) while
// frames come, then
// parks on a futex, its bell: the remote rings it after writing a frame
// (data) or after consuming one this end waits to write (room); the
// reader then delivers what arrived and moves the frames that waited for
// room into the ring. A futex, not the socket, because a goroutine the
// netpoller wakes waits for a processor that spinning goroutines hold.
// The unix socket stays open beside the mapping: it carries the orderly
// close ('X') and, by ending, the peer's death.
//
// While a goroutine of the rank waits in the library and polls the link
// itself (Endpoint.SpinPoll, poll.go), the reader stands aside: it parks
// with its bell silenced (0), so the remote's writes cost it no wake-up,
// and the poller hands over the frames; when the last poller leaves it
// re-arms the bell (1) and looks at the ring once, so nothing that came
// meanwhile waits for the reader's nap to end. A consumer token makes
// the reader and a poller take turns: one of them at a time delivers,
// which keeps HandleFrame calls one at a time and in order. The bell's
// third value (2) wakes the reader whatever it waits for: the link
// closed or was lost.
//
// The writer reports not ready (the data channel's high-water mark) once
// the ring has no room for another frame of the largest size, so the
// endpoint's next frame waits in its own queue, not in a copy here: a
// frame is copied once into the ring and once out of it (into the posted
// receive buffer, for rendezvous data).
//
// Ring layout, per direction (little endian, offsets in bytes):
//
//	0    tail       uint64  bytes the writer published (monotonic)
//	64   head       uint64  bytes the reader consumed (monotonic)
//	128  sleeping   uint32  the reader's futex bell: 1 it parked, the writer rings it;
//	                        0 awake or standing aside; 2 woken by its own end
//	192  wantSpace  uint32  the writer waits for room: the reader rings the writer's bell
//	256  data       [size]byte, size a power of two
//
// A record in data is a uint32 length n, 4 bytes of padding and the frame
// (n bytes), padded to 8; a length of shmWrap says the rest of the ring up
// to its end is unused and the next record starts at its beginning, so a
// frame is always contiguous.

const (
	// DefaultShmRing is the data size of one direction's ring.
	DefaultShmRing = 4 << 20
	// shmCtrl is the control block before each ring's data.
	shmCtrl = 256
	// shmWrap marks the end of the used part of the ring.
	shmWrap = ^uint32(0)
	// shmSpin is how long a reader that found its ring empty keeps
	// looking before it parks: a reply within it costs no wake-up.
	shmSpin = 30 * time.Microsecond
)

// shmNap bounds a parked reader's sleep: a safety net, every wake-up
// rings its bell. shmAsideNap is a reader's nap while it stands aside
// for pollers that leave lazily (poll.go): how late, at most, it notices
// that they stopped coming back. (Variables for tests.)
var (
	shmNap      = time.Second
	shmAsideNap = time.Millisecond
)

// shmClosed is the orderly close on the link's unix socket.
var shmClosed = []byte{'X'}

// ring wakes the reader whose bell is *bell if it parked and asked for
// it (1).
func ring(bell *uint32) {
	if atomic.LoadUint32(bell) != 0 && atomic.CompareAndSwapUint32(bell, 1, 0) {
		futexWake(bell, 1, futexShared)
	}
}

// The bell's values (the ring layout's sleeping word).
const (
	bellQuiet = 0 // the reader is awake, or parked aside for a poller
	bellArmed = 1 // the reader parked: ring it after a write
	bellSelf  = 2 // its own end woke it: closed or lost
)

// The consumer token's values (shmLink.token).
const (
	tokenFree    = 0
	tokenHeld    = 1
	tokenRetired = 2 // the reader ended: nobody touches the rings again
)

// shmRing is one direction's ring in the shared mapping.
type shmRing struct {
	data      []byte
	mask      uint64
	tail      *uint64
	head      *uint64
	sleeping  *uint32
	wantSpace *uint32
}

func newShmRing(region []byte) shmRing {
	base := unsafe.Pointer(&region[0])
	return shmRing{
		data:      region[shmCtrl:],
		mask:      uint64(len(region) - shmCtrl - 1),
		tail:      (*uint64)(base),
		head:      (*uint64)(unsafe.Add(base, 64)),
		sleeping:  (*uint32)(unsafe.Add(base, 128)),
		wantSpace: (*uint32)(unsafe.Add(base, 192)),
	}
}

func align8(n int) uint64 { return uint64(n+7) &^ 7 }

// put copies a frame into the ring; false if it does not fit now. Only
// the link's writer (under wmu) calls it.
func (r *shmRing) put(hdr, payload []byte) bool {
	n := len(hdr) + len(payload)
	need := 8 + align8(n)
	tail := atomic.LoadUint64(r.tail)
	size := r.mask + 1
	off := tail & r.mask
	var pad uint64
	if off+need > size {
		pad = size - off
	}
	if tail+pad+need-atomic.LoadUint64(r.head) > size {
		return false
	}
	if pad > 0 {
		binary.LittleEndian.PutUint32(r.data[off:], shmWrap)
		tail += pad
		off = 0
	}
	binary.LittleEndian.PutUint32(r.data[off:], uint32(n))
	copy(r.data[off+8:], hdr)
	copy(r.data[off+8+uint64(len(hdr)):], payload)
	atomic.StoreUint64(r.tail, tail+need)
	return true
}

func (r *shmRing) empty() bool {
	return atomic.LoadUint64(r.tail) == atomic.LoadUint64(r.head)
}

// shmLink is one end of a shared-memory link.
type shmLink struct {
	name     string // "shm link to rank 3", for errors
	kind     string // "shm"
	conn     *net.UnixConn
	region   []byte // the mapping, unmapped when the last user lets go
	tx, rx   shmRing
	maxFrame int
	refs     atomic.Int32 // the holds on region: Close, the reader, readSocket

	wmu      sync.Mutex
	closed   bool     // Close was called (under wmu)
	overflow [][]byte // frames taken while the ring was full, in order (under wmu)
	spare    [][]byte // their buffers, for reuse (under wmu)
	blocked  bool     // WriteFrame reported not ready (under wmu)

	h       LinkHandler
	ep      *Endpoint   // the handler's endpoint, whose pollers poll the link; nil if none
	pending atomic.Bool // the writer waits for room: frames in the overflow, or blocked
	// token makes one consumer at a time hand frames over: the reader or
	// a poller (tokenFree, tokenHeld); the reader retires it as it ends.
	token atomic.Int32
	// parked: the reader is parked (or about to), armed or aside; a
	// poller's arrival silences its bell, the last one's leaving re-arms
	// it.
	parked   atomic.Bool
	nudge    chan struct{} // wakes a reader aside on the Go side (parkAside)
	nap      time.Duration // shmNap when the link was made
	asideNap time.Duration // shmAsideNap when the link was made
	stopped  atomic.Bool   // Close was called: the reader ends
	gone     chan struct{} // closed when the socket ends: the remote closed or died
	lost     atomic.Bool   // gone is closed
	why      error         // why the socket ended, set before gone closes
	bound    atomic.Bool
	// broken: the remote broke the ring's rules; the consumer that found
	// it handed over the close, and nobody delivers again
	broken atomic.Bool

	sent, received atomic.Int64
}

// newShmLink makes the end of a link over the mapping region (two rings:
// ring 0 carries the listener's frames, ring 1 the dialer's) and the
// handshake's socket. It owns both from now on.
func newShmLink(name string, conn *net.UnixConn, region []byte, listener bool, maxFrame int) *shmLink {
	half := len(region) / 2
	r0, r1 := newShmRing(region[:half]), newShmRing(region[half:])
	l := &shmLink{name: name, kind: "shm", conn: conn, region: region, tx: r0, rx: r1,
		maxFrame: min(int(r0.mask+1)/4, 1<<20),
		gone:     make(chan struct{}), nudge: make(chan struct{}, 1), nap: shmNap, asideNap: shmAsideNap}
	if !listener {
		l.tx, l.rx = r1, r0
	}
	if maxFrame > HeaderLen && maxFrame < l.maxFrame {
		l.maxFrame = maxFrame
	}
	l.refs.Store(3) // Close's, the reader's and readSocket's
	go l.readSocket()
	return l
}

func (l *shmLink) release() {
	if l.refs.Add(-1) == 0 {
		_ = syscall.Munmap(l.region)
	}
}

// readSocket handles the remote's wake-ups and notices until the socket
// ends.
func (l *shmLink) readSocket() {
	defer l.release()
	var buf [64]byte
	for {
		n, err := l.conn.Read(buf[:])
		closed := false
		for _, b := range buf[:n] {
			if b == 'X' {
				closed = true
			}
		}
		if closed || err != nil {
			if closed {
				l.why = fmt.Errorf("%s: closed by its remote end", l.name)
			} else {
				l.why = Failure(l.name, fmt.Errorf("the remote process is gone (%v)", err))
			}
			l.lost.Store(true)
			close(l.gone)
			l.wakeSelf()
			return
		}
	}
}

// Bind implements Link: the reader starts, and an endpoint's waiting
// goroutines may poll the link.
func (l *shmLink) Bind(h LinkHandler) {
	l.h = h
	if c, ok := h.(*conn); ok {
		l.ep = c.ep
	}
	l.bound.Store(true)
	if l.ep != nil {
		// before the reader starts: it leaves the set as it ends
		l.ep.polls.add(l)
	}
	go l.read()
}

// MaxFrame implements Link.
func (l *shmLink) MaxFrame() int { return l.maxFrame }

// WriteFrame implements Link. A frame that does not fit in the ring waits
// in the overflow, in order, until the reader makes room; the link then
// reports not ready until the overflow is in the ring (HandleWritable).
func (l *shmLink) WriteFrame(hdr, payload []byte) (bool, error) {
	n := len(hdr) + len(payload)
	if n > l.maxFrame {
		return false, fmt.Errorf("%s: %d-byte frame exceeds %d", l.name, n, l.maxFrame)
	}
	l.wmu.Lock()
	if l.closed {
		l.wmu.Unlock()
		return false, ErrClosed
	}
	if l.lost.Load() {
		l.wmu.Unlock()
		return false, l.why
	}
	if len(l.overflow) == 0 && l.tx.put(hdr, payload) {
		ring(l.tx.sleeping) // under wmu: the mapping is surely there
		ready := l.roomLocked()
		l.wmu.Unlock()
		l.sent.Add(int64(n))
		return ready, nil
	}
	var b []byte
	if k := len(l.spare); k > 0 {
		b, l.spare = l.spare[k-1][:0], l.spare[:k-1]
	}
	l.overflow = append(l.overflow, append(append(b, hdr...), payload...))
	l.sent.Add(int64(n))
	ready := l.flushLocked()
	l.blocked = !ready
	l.pending.Store(!ready)
	l.wmu.Unlock()
	if !ready {
		l.wake()
	}
	return ready, nil
}

// roomLocked reports whether the ring has room for one more frame of the
// largest size. If not, the writer is blocked: it asks the remote for a
// wake-up when it consumes (wantSpace), and the reader or a poller calls
// HandleWritable once there is room (flush). wmu is held.
func (l *shmLink) roomLocked() bool {
	if l.fits(l.maxFrame) {
		return true
	}
	l.blocked = true
	l.pending.Store(true)
	atomic.StoreUint32(l.tx.wantSpace, 1)
	// look again: the remote may have consumed before it saw the request
	if l.fits(l.maxFrame) {
		l.blocked = false
		return true
	}
	// the remote's ring for room wakes only an armed reader: one aside
	// for a lazy poller (parkAside) must arm first
	l.wake()
	return false
}

// flushLocked moves overflow frames into the ring while they fit and asks
// the reader for a wake-up when one does not; it reports whether the
// overflow is empty. wmu is held.
func (l *shmLink) flushLocked() bool {
	for {
		moved := false
		for len(l.overflow) > 0 {
			f := l.overflow[0]
			if !l.tx.put(f[:HeaderLen], f[HeaderLen:]) {
				break
			}
			l.overflow[0] = nil
			l.overflow = l.overflow[1:]
			if cap(f) <= 64<<10 {
				l.spare = append(l.spare, f)
			}
			moved = true
		}
		if moved {
			ring(l.tx.sleeping)
		}
		if len(l.overflow) == 0 {
			return true
		}
		// ask for room, then look again: the reader may have made it
		// before it saw the request
		atomic.StoreUint32(l.tx.wantSpace, 1)
		if !l.fits(len(l.overflow[0])) {
			return false
		}
	}
}

// fits reports whether a frame of n bytes fits in the ring now.
func (l *shmLink) fits(n int) bool {
	need := 8 + align8(n)
	r := &l.tx
	tail := atomic.LoadUint64(r.tail)
	off := tail & r.mask
	if off+need > r.mask+1 {
		need += r.mask + 1 - off
	}
	return tail+need-atomic.LoadUint64(r.head) <= r.mask+1
}

// flush moves the frames that waited for room into the ring, on the
// consumer's goroutine; HandleWritable follows once they all are and
// another frame of the largest size fits.
func (l *shmLink) flush() {
	l.wmu.Lock()
	if l.closed || len(l.overflow) == 0 && !l.blocked {
		l.pending.Store(false)
		l.wmu.Unlock()
		return
	}
	ready := l.flushLocked() && l.roomLocked()
	writable := ready && l.blocked
	if writable {
		l.blocked = false
	}
	l.pending.Store(!ready)
	l.wmu.Unlock()
	if writable {
		l.h.HandleWritable()
	}
}

// canFlush reports whether the writer waits for room and there is some.
// If there is not enough yet, it asks the remote again to ring once it
// consumes: the remote answers a request once, after the first frame it
// takes, which may have made too little room.
func (l *shmLink) canFlush() bool {
	if !l.pending.Load() {
		return false
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.closed {
		return false
	}
	n := l.maxFrame
	if len(l.overflow) > 0 {
		n = len(l.overflow[0])
	} else if !l.blocked {
		return false
	}
	if l.fits(n) {
		return true
	}
	// a poller looks here on every poll: write the remote's line only
	// when the request is not already there
	if atomic.LoadUint32(l.tx.wantSpace) == 0 {
		atomic.StoreUint32(l.tx.wantSpace, 1)
	}
	return l.fits(n)
}

// read hands the ring's frames to the handler and moves frames that
// waited for room into the other ring: it spins while there is work or
// was a moment ago, then parks on its bell until the remote rings it, the
// remote closes or dies (after which it hands over what the ring still
// holds, then the close), or Close. While the endpoint's goroutines poll
// the link it stands aside (parkAside).
func (l *shmLink) read() {
	held := false // the reader holds the consumer token
	defer func() {
		l.retire(held)
		l.release()
	}()
	var idle time.Time
	var seen uint64 // the lazy leaves the reader has seen (pollSet.aside)
	nap := time.NewTimer(time.Hour)
	nap.Stop()
	spins := 0
	for {
		if l.stopped.Load() {
			return // Close: the remote's close or death is no news to it
		}
		if l.lost.Load() {
			l.acquire()
			held = true
			for !l.broken.Load() && l.deliver() {
			}
			if !l.broken.Load() {
				l.h.HandleClose(l.why)
			}
			return
		}
		if l.polled() || (l.ep != nil && !l.waiting() && l.ep.polls.aside(&seen)) {
			l.parkAside(nap)
			spins, idle = 0, time.Time{}
			continue
		}
		if l.token.CompareAndSwap(tokenFree, tokenHeld) {
			did := l.deliver()
			if !did && !l.broken.Load() && l.canFlush() {
				l.flush()
				did = true
			}
			l.token.Store(tokenFree)
			if l.broken.Load() {
				return
			}
			if did {
				// yield, so the goroutines the frames woke run on this
				// processor
				runtime.Gosched()
				spins, idle = 0, time.Time{}
				continue
			}
		}
		// spin: look again, at the clock every 64 looks, and yield
		// only every 1024 (some 20 µs): a yield wakes an idle
		// processor's thread to look for work, and it spins on the
		// other core, the remote's on a 2-core machine
		if spins++; spins&63 != 0 {
			continue
		}
		if spins&1023 == 0 {
			runtime.Gosched()
		}
		now := time.Now()
		if idle.IsZero() {
			idle = now
		}
		if now.Sub(idle) < shmSpin {
			continue
		}
		l.parkArmed()
		spins, idle = 0, time.Time{}
	}
}

// waiting implements pollLink.
func (l *shmLink) waiting() bool { return l.pending.Load() }

// polled reports whether goroutines of the endpoint poll the link.
func (l *shmLink) polled() bool { return l.ep != nil && l.ep.pollers.Load() > 0 }

// parkArmed parks the reader until the remote rings its bell: it says
// so, then looks once more (a writer looks at the bell after it
// publishes).
func (l *shmLink) parkArmed() {
	bell := l.rx.sleeping
	l.parked.Store(true)
	atomic.StoreUint32(bell, bellArmed)
	if !l.rx.empty() || l.canFlush() || l.stopped.Load() || l.lost.Load() || l.polled() {
		atomic.StoreUint32(bell, bellQuiet)
		l.parked.Store(false)
		return
	}
	futexWait(bell, bellArmed, l.nap, futexShared)
	l.parked.Store(false)
	atomic.StoreUint32(bell, bellQuiet)
}

// parkAside parks the reader while a poller takes the frames, its bell
// silent: a poller's arrival silences an armed bell (pollersChanged), and
// the last poller's leaving re-arms it, so the reader then wakes on the
// remote's next write, or at once if something came meanwhile.
//
// Where pollers leave lazily (poll.go) nothing remote wakes an aside
// reader, so it waits on the Go side instead, for shmAsideNap or a
// nudge (an eager leave, Close, the socket's end), and the loop looks
// again. A futex nap would hold the reader's processor in a system call
// each time, which the runtime's sysmon takes back 20 µs later and then
// keeps watching every 20 µs: on a 2-core machine, one more thread
// taking the cores two polling ranks spin on.
func (l *shmLink) parkAside(nap *time.Timer) {
	bell := l.rx.sleeping
	l.parked.Store(true)
	if (!l.polled() && l.ep.polls.eager.Load()) || l.stopped.Load() || l.lost.Load() {
		l.parked.Store(false)
		return
	}
	if l.ep.polls.lazy() {
		if !l.polled() && l.waiting() {
			// frames wait for room: the reader must be armed for the
			// remote's ring (roomLocked nudges it here)
			l.parked.Store(false)
			return
		}
		nap.Reset(l.asideNap)
		select {
		case <-l.nudge:
		case <-nap.C:
		}
		nap.Stop()
		l.parked.Store(false)
		return
	}
	futexWait(bell, bellQuiet, l.nap, futexShared)
	l.parked.Store(false)
	atomic.StoreUint32(bell, bellQuiet)
}

// wake nudges a reader that waits aside on the Go side (parkAside).
func (l *shmLink) wake() {
	select {
	case l.nudge <- struct{}{}:
	default:
	}
}

// pollersChanged implements pollLink: when the endpoint's first poller
// comes, a parked reader's bell goes quiet (the remote stops ringing it);
// when the last leaves, it is armed again and rung if work came. Where
// pollers leave lazily, an armed bell stays armed when one comes: its
// lazy leave would leave the reader asleep with a silent bell, and the
// remote's next write rings it once, after which it stands aside.
func (l *shmLink) pollersChanged(on bool) {
	if on && l.ep.polls.lazy() {
		return
	}
	if !l.parked.Load() || !l.hold() {
		return
	}
	defer l.release()
	bell := l.rx.sleeping
	if on {
		atomic.CompareAndSwapUint32(bell, bellArmed, bellQuiet)
		return
	}
	l.wake()
	if atomic.CompareAndSwapUint32(bell, bellQuiet, bellArmed) && (!l.rx.empty() || l.pending.Load()) {
		ring(bell)
	}
}

// poll implements pollLink: a waiting goroutine of the endpoint hands
// over what arrived, if no other consumer is at it.
func (l *shmLink) poll() bool {
	if !l.token.CompareAndSwap(tokenFree, tokenHeld) {
		return false
	}
	did := false
	if !l.broken.Load() && !l.lost.Load() {
		did = l.deliver()
		if !did && !l.broken.Load() && l.canFlush() {
			l.flush()
			did = true
		}
	}
	l.token.Store(tokenFree)
	return did
}

// acquire takes the consumer token, waiting for a poller to give it up.
func (l *shmLink) acquire() {
	for !l.token.CompareAndSwap(tokenFree, tokenHeld) {
		runtime.Gosched()
	}
}

// retire ends the reader's consumption for good: it takes the token (or
// keeps it: held) for ever, so no poller touches the rings again (the
// mapping may go once the reader lets it go), and leaves the endpoint's
// polled links.
func (l *shmLink) retire(held bool) {
	if held {
		l.token.Store(tokenRetired)
	} else {
		for !l.token.CompareAndSwap(tokenFree, tokenRetired) {
			runtime.Gosched()
		}
	}
	if l.ep != nil {
		l.ep.polls.remove(l)
	}
}

// hold takes a hold on the mapping unless it is already gone; release
// gives it back.
func (l *shmLink) hold() bool {
	for {
		n := l.refs.Load()
		if n <= 0 {
			return false
		}
		if l.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// wakeSelf wakes this end's reader whatever it waits for: it looks at
// stopped and lost.
func (l *shmLink) wakeSelf() {
	if l.bound.Load() {
		atomic.StoreUint32(l.rx.sleeping, bellSelf)
		futexWake(l.rx.sleeping, 1, futexShared)
	}
	l.wake()
}

// deliver hands every frame in the ring to the handler, straight from the
// mapping; false if there was none.
func (l *shmLink) deliver() bool {
	r := &l.rx
	head := atomic.LoadUint64(r.head)
	tail := atomic.LoadUint64(r.tail)
	if head == tail {
		return false
	}
	size := r.mask + 1
	for head != tail {
		off := head & r.mask
		n := binary.LittleEndian.Uint32(r.data[off:])
		if n == shmWrap {
			head += size - off
			continue
		}
		// the remote may write anything into the mapping: check before
		// slicing it
		if n < HeaderLen || int(n) > l.maxFrame || off+8+uint64(n) > size || tail-head > size {
			l.fail(fmt.Errorf("%s: %w: record of %d bytes at %d", l.name, ErrFrame, n, off))
			return true
		}
		f := r.data[off+8 : off+8+uint64(n) : off+8+uint64(n)]
		l.received.Add(int64(n))
		l.h.HandleFrame(f[:HeaderLen:HeaderLen], f[HeaderLen:])
		head += 8 + align8(int(n))
		atomic.StoreUint64(r.head, head)
		if atomic.LoadUint32(r.wantSpace) != 0 && atomic.CompareAndSwapUint32(r.wantSpace, 1, 0) {
			ring(l.tx.sleeping) // the remote's reader moves its frames in
		}
		if head == tail {
			tail = atomic.LoadUint64(r.tail)
		}
	}
	return true
}

// fail ends a link whose remote broke the ring's rules; the consumer
// that found it (holding the token) hands over the close, the reader
// stops (broken), and Close still releases the mapping.
func (l *shmLink) fail(err error) {
	l.broken.Store(true)
	_ = l.conn.Close()
	<-l.gone
	l.h.HandleClose(err)
}

func (l *shmLink) stopOnce() {
	l.stopped.Store(true)
	l.wakeSelf()
}

// Close implements Link: the remote sees the link closed after the frames
// in the ring. Frames still in the overflow are dropped.
func (l *shmLink) Close() error {
	l.wmu.Lock()
	if l.closed {
		l.wmu.Unlock()
		return nil
	}
	l.closed = true
	l.flushLocked()
	l.overflow = nil
	l.wmu.Unlock()
	if !l.lost.Load() {
		_, _ = l.conn.Write(shmClosed)
	}
	l.stopOnce()
	_ = l.conn.Close()
	if !l.bound.Load() {
		l.release() // no reader holds the mapping
	}
	l.release()
	return nil
}

// Path implements PathReporter.
func (l *shmLink) Path() Path { return Path{Link: l.kind} }

// Counts implements Counter.
func (l *shmLink) Counts() (sent, received int64, closed bool) {
	l.wmu.Lock()
	closed = l.closed
	l.wmu.Unlock()
	return l.sent.Load(), l.received.Load(), closed || l.lost.Load()
}

// mapShm maps size bytes of the file f read-write and shared.
func mapShm(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}
