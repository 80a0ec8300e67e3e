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
// each round, so the rank's own goroutines run) while frames come, then
// parks on a futex, its bell: the remote rings it after writing a frame
// (data) or after consuming one this end waits to write (room); the
// reader then delivers what arrived and moves the frames that waited for
// room into the ring. A futex, not the socket, because a goroutine the
// netpoller wakes waits for a processor that spinning goroutines hold.
// The unix socket stays open beside the mapping: it carries the orderly
// close ('X') and, by ending, the peer's death.
//
// Ring layout, per direction (little endian, offsets in bytes):
//
//	0    tail       uint64  bytes the writer published (monotonic)
//	64   head       uint64  bytes the reader consumed (monotonic)
//	128  sleeping   uint32  the reader parked (its futex bell): the writer rings it
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
	// shmNap bounds a parked reader's sleep: a safety net, every wake-up
	// rings its bell.
	shmNap = time.Second
)

// shmClosed is the orderly close on the link's unix socket.
var shmClosed = []byte{'X'}

// futexWait parks the thread while *addr is val, up to d; futexWake wakes
// one thread parked on addr. Shared futexes: the word is in a mapping
// two processes share.
func futexWait(addr *uint32, val uint32, d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), 0 /* FUTEX_WAIT */, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

func futexWake(addr *uint32) {
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), 1 /* FUTEX_WAKE */, 1, 0, 0, 0)
}

// ring wakes the reader whose bell is *bell if it parked.
func ring(bell *uint32) {
	if atomic.LoadUint32(bell) != 0 && atomic.CompareAndSwapUint32(bell, 1, 0) {
		futexWake(bell)
	}
}

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
	pending atomic.Bool   // frames wait in the overflow for room
	stopped atomic.Bool   // Close was called: the reader ends
	gone    chan struct{} // closed when the socket ends: the remote closed or died
	lost    atomic.Bool   // gone is closed
	why     error         // why the socket ended, set before gone closes
	bound   atomic.Bool
	// broken: the remote broke the ring's rules, the reader stopped (the
	// reader's own)
	broken bool

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
		gone:     make(chan struct{})}
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

// Bind implements Link: the reader starts.
func (l *shmLink) Bind(h LinkHandler) {
	l.h = h
	l.bound.Store(true)
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
		l.wmu.Unlock()
		l.sent.Add(int64(n))
		return true, nil
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
	return ready, nil
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
		if !l.fits(l.overflow[0]) {
			return false
		}
	}
}

// fits reports whether frame f fits in the ring now.
func (l *shmLink) fits(f []byte) bool {
	need := 8 + align8(len(f))
	r := &l.tx
	tail := atomic.LoadUint64(r.tail)
	off := tail & r.mask
	if off+need > r.mask+1 {
		need += r.mask + 1 - off
	}
	return tail+need-atomic.LoadUint64(r.head) <= r.mask+1
}

// flush moves the frames that waited for room into the ring, on the
// reader's goroutine; HandleWritable follows once they all are.
func (l *shmLink) flush() {
	l.wmu.Lock()
	if l.closed || len(l.overflow) == 0 {
		l.pending.Store(false)
		l.wmu.Unlock()
		return
	}
	ready := l.flushLocked()
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

// canFlush reports whether a frame waits for room and there is some.
func (l *shmLink) canFlush() bool {
	if !l.pending.Load() {
		return false
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return !l.closed && len(l.overflow) > 0 && l.fits(l.overflow[0])
}

// read hands the ring's frames to the handler and moves frames that
// waited for room into the other ring: it spins while there is work or
// was a moment ago, then parks on its bell until the remote rings it, the
// remote closes or dies (after which it hands over what the ring still
// holds, then the close), or Close.
func (l *shmLink) read() {
	defer l.release()
	var idle time.Time
	spins := 0
	for {
		if l.deliver() {
			if l.broken {
				return
			}
			spins, idle = 0, time.Time{}
			continue
		}
		if l.canFlush() {
			l.flush()
			spins, idle = 0, time.Time{}
			continue
		}
		if l.stopped.Load() {
			return
		}
		if l.lost.Load() {
			if !l.deliver() && !l.broken {
				l.h.HandleClose(l.why)
				return
			}
			if l.broken {
				return
			}
			continue
		}
		// spin: yield the processor each round, so this rank's own
		// goroutines (woken by the frames just handed over) run
		runtime.Gosched()
		if spins++; spins&15 != 0 {
			continue
		}
		now := time.Now()
		if idle.IsZero() {
			idle = now
		}
		if now.Sub(idle) < shmSpin {
			continue
		}
		// park: say so, then look once more (a writer looks at the bell
		// after it publishes)
		atomic.StoreUint32(l.rx.sleeping, 1)
		if !l.rx.empty() || l.canFlush() || l.stopped.Load() || l.lost.Load() {
			atomic.StoreUint32(l.rx.sleeping, 0)
			continue
		}
		futexWait(l.rx.sleeping, 1, shmNap)
		atomic.StoreUint32(l.rx.sleeping, 0)
		spins, idle = 0, time.Time{}
	}
}

// wakeSelf rings this end's own bell: the reader looks at stopped and
// lost.
func (l *shmLink) wakeSelf() {
	if l.bound.Load() {
		ring(l.rx.sleeping)
	}
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

// fail ends a link whose remote broke the ring's rules; the reader stops
// (broken), and Close still releases the mapping.
func (l *shmLink) fail(err error) {
	l.broken = true
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
