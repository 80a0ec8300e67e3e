package wasm

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshmpi/meshmpi/peer"
)

// Endpoint is what a Guest hands its links and the job's departures to: a
// *peer.Endpoint (the same contract as mesh.Endpoint, declared here so the
// guest does not link the mesh and its WebRTC stack).
type Endpoint interface {
	Attach(rank int, l peer.Link) error
	FailPeer(rank int, err error)
}

// Welcome is what the host tells its guest once the job has formed (or,
// for a late rank, once it joined the formed job).
type Welcome struct {
	Rank, Size int
	// Max is the most ranks the job may grow to, when it may grow past
	// Size; 0 when it cannot. Ranks Size … Max-1 join late.
	Max int
	// Late says this rank joined after the job formed: Rank is in
	// [Size, Max), outside the world of Size ranks.
	Late     bool
	Settings map[string]string // the job's settings, as the signaling server sent them
}

// Limit is the most ranks the job can hold, max(Size, Max): every rank
// below it is a possible peer, so tables by rank have Limit entries.
func (w Welcome) Limit() int { return max(w.Size, w.Max) }

// HelloTimeout bounds how long a guest waits for a connection on its
// listener to say hello with the right key.
const HelloTimeout = 10 * time.Second

// errBadKey means a connection did not prove it is the host.
var errBadKey = errors.New("wasm: a connection to the rank did not present the host's key")

// Guest is a hosted rank's end of the stream to its host: the rank's
// peer.Dialer, and the peer.Links it hands to its endpoint, one per
// remote rank, all multiplexed over the stream.
//
// Goroutines: one reader (Start … Close) delivers frames, credits and
// link events in stream order; writes go straight to the stream under a
// lock, from whichever goroutine sends.
type Guest struct {
	rw      io.ReadWriteCloser
	rd      *Reader
	welcome Welcome
	ep      Endpoint

	wmu  sync.Mutex // guards wbuf, werr and writes to rw
	wbuf []byte
	werr error
	vw   vecWriter // rw's two-buffer writes; nil: data messages are copied whole

	aborted  func(rank, code int, where string) // OnAbort's; set before Start
	evicted  func(err error)                    // OnEvicted's; set before Start
	abortAck chan struct{}                      // closed when the host took this rank's abort
	ackOnce  sync.Once

	nameSlots chan struct{} // one per name request outstanding: MaxNameRequests

	report atomic.Pointer[func()] // OnReport's; nil until then

	mu       sync.Mutex
	slots    []slot                     // by rank, Welcome.Limit of them
	calls    map[uint32]chan nameAnswer // name requests outstanding, by id
	lastCall uint32                     // the last name request's id
	dead     error                      // why the stream ended; nil while it is up
	started  bool
	readDone chan struct{}
	close    sync.Once
	closing  atomic.Bool // Close was called: the stream ends by the guest's will
}

// slot is the guest's state for one remote rank.
type slot struct {
	link  *guestLink
	err   error         // why the rank cannot be reached (no link)
	asked bool          // a Connect went out
	done  chan struct{} // made by the first Dial; closed when link or err is set
}

// Accept waits on ln (the listener the host pre-opened for the guest)
// for the host's connection, checks its key and joins the job through
// it. A connection that does not present key within HelloTimeout is
// closed and the next one awaited, so another local process that
// connects first cannot pose as the host.
func Accept(ctx context.Context, ln net.Listener, key [KeyLen]byte) (*Guest, error) {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				err = context.Cause(ctx)
			}
			return nil, fmt.Errorf("wasm: waiting for the host to connect: %w", err)
		}
		g, err := Connect(ctx, c, key)
		if errors.Is(err, errBadKey) {
			continue // Connect closed it
		}
		return g, err
	}
}

// Connect speaks the opening of the protocol on rw: it checks the host's
// hello and key, asks to join, and returns once the host has joined the
// job (Welcome) or failed to. On error rw is closed.
func Connect(ctx context.Context, rw io.ReadWriteCloser, key [KeyLen]byte) (res *Guest, err error) {
	g := &Guest{rw: rw, vw: vecWriterOf(rw), rd: NewReader(bufio.NewReaderSize(rw, 64<<10)), readDone: make(chan struct{}), abortAck: make(chan struct{}),
		nameSlots: make(chan struct{}, MaxNameRequests)}
	hello := time.AfterFunc(HelloTimeout, func() { rw.Close() })
	stop := context.AfterFunc(ctx, func() { rw.Close() })
	defer func() {
		hello.Stop()
		if ctxDone := !stop(); ctxDone || err != nil {
			rw.Close()
			if ctxDone {
				res, err = nil, fmt.Errorf("wasm: joining through the host: %w", context.Cause(ctx))
			}
		}
	}()
	m, err := g.rd.Next()
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: reading the host's hello: %w", errBadKey, err)
	case m.Type != MsgHostHello:
		return nil, fmt.Errorf("%w: first message is %v", errBadKey, m.Type)
	case subtle.ConstantTimeCompare(m.Key[:], key[:halfKey]) != 1:
		return nil, errBadKey
	case m.Version != Version:
		return nil, fmt.Errorf("wasm: the host speaks protocol version %d, this rank %d: %w", m.Version, Version, peer.ErrNotSupported)
	}
	hello.Stop() // the host is who it says; joining may take as long as ctx allows
	if err := g.write(AppendJoin(g.lockWrite(), key)); err != nil {
		return nil, err
	}
	m, err = g.rd.Next()
	switch {
	case err != nil:
		return nil, fmt.Errorf("wasm: waiting for the host's welcome: %w", err)
	case m.Type == MsgRefused:
		return nil, fmt.Errorf("wasm: the host could not join the job: %s: %w", m.Text, peer.ErrProcFailed)
	case m.Type != MsgWelcome:
		return nil, fmt.Errorf("%w: %v before the welcome", ErrProtocol, m.Type)
	}
	g.welcome = Welcome{Rank: m.Rank, Size: m.Size, Max: m.Max, Late: m.Late, Settings: m.Settings}
	g.slots = make([]slot, g.welcome.Limit())
	return g, nil
}

// Welcome returns the job as the host joined it.
func (g *Guest) Welcome() Welcome { return g.welcome }

// OnAbort sets what the guest is told when another rank of the job
// calls Abort (rank, its code, where it called it); call it before Start.
func (g *Guest) OnAbort(f func(rank, code int, where string)) { g.aborted = f }

// OnEvicted sets what the guest is told when the job declared its rank
// failed and went on without it (evicted): f runs before the endpoint
// closes with err, as mesh.Net.Evicted does for a native rank, so that a
// process that is this rank can end saying why before a failed operation
// returns to its program. err matches peer.ErrProcFailed. Call it before
// Start.
func (g *Guest) OnEvicted(f func(err error)) { g.evicted = f }

// OnReport makes the guest answer its host's report requests with f
// (which prints what the rank is blocked in), when its host offered them
// (EnvOffers): the guest says report-ready, and the host may then ask at
// any time; the reader calls f for each request, so f must be quick. It
// reports whether the guest said so; a host that did not offer them
// (one built before them) is never told. Call it once, after Connect.
func (g *Guest) OnReport(f func()) bool {
	if !offered(os.Getenv(EnvOffers), OfferReport) || !g.report.CompareAndSwap(nil, &f) {
		return false
	}
	return g.write(AppendReportReady(g.lockWrite())) == nil
}

// OffersTelemetry reports whether the guest's host takes telemetry
// (EnvOffers has OfferTelemetry): a host built before it does not.
func (g *Guest) OffersTelemetry() bool { return offered(os.Getenv(EnvOffers), OfferTelemetry) }

// SendTelemetry sends the host the operations the rank completed and
// how many it dropped, in as many telemetry messages as they need. Call
// it only when OffersTelemetry.
func (g *Guest) SendTelemetry(dropped int, ops []Op) error {
	for first := true; first || len(ops) > 0; first = false {
		b, n := AppendTelemetry(g.lockWrite(), dropped, ops)
		if err := g.write(b); err != nil {
			return err
		}
		ops, dropped = ops[n:], 0
	}
	return nil
}

// abortWait bounds how long Abort waits for the host to tell the job.
const abortWait = 3 * time.Second

// Abort tells the host this rank called Abort with code at where, and
// returns once the host has told the job (so the rank may exit at once),
// the stream ended, or abortWait passed.
func (g *Guest) Abort(code int, where string) {
	if err := g.write(AppendAbort(g.lockWrite(), g.welcome.Rank, code, where)); err != nil {
		return
	}
	t := time.NewTimer(abortWait)
	defer t.Stop()
	select {
	case <-g.abortAck:
	case <-g.readDone:
	case <-t.C:
	}
}

// Start begins delivering the host's messages: links go to ep,
// departures become ep.FailPeer, and name requests get their answers.
func (g *Guest) Start(ep Endpoint) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return
	}
	g.ep, g.started = ep, true
	g.rd.Land = g.land
	go g.readLoop()
}

// Close ends the stream: the host leaves the job for the guest. Links
// still open see HandleClose. It returns once the reader has stopped.
func (g *Guest) Close() {
	g.close.Do(func() {
		g.closing.Store(true)
		// the end of the stream first, then the descriptor: wazero's
		// socket close (v1.12) shuts down nothing, so the host saw the
		// stream end only when its drain timed out, 5 s after the guest
		// exited; a shutdown of the writing half reaches it at once
		// (not under wmu: a write blocked on a full socket holds it, and
		// the close below is what unblocks it)
		if cw, ok := g.rw.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		g.rw.Close()
		g.mu.Lock()
		started := g.started
		g.started = true // no reader after Close
		g.mu.Unlock()
		if started {
			<-g.readDone
		} else {
			g.fail(peer.ErrClosed)
		}
	})
}

// lockWrite takes the write lock and returns the write buffer, emptied;
// write sends what was appended to it and releases the lock.
func (g *Guest) lockWrite() []byte {
	g.wmu.Lock()
	return g.wbuf[:0]
}

func (g *Guest) write(b []byte) error { return g.writeVec(b, nil) }

// writeVec is write of b followed by more, in one write where rw can
// take two buffers: a large frame's payload is written from where the
// program has it (a vecWriter), not copied into the write buffer.
func (g *Guest) writeVec(b, more []byte) error {
	defer g.wmu.Unlock()
	g.wbuf = b
	if g.werr != nil {
		return g.werr
	}
	var err error
	switch {
	case more == nil:
		_, err = g.rw.Write(b)
	case g.vw != nil:
		err = g.vw.writeVec(b, more)
	default: // rw takes one buffer: join them
		g.wbuf = append(b, more...)
		_, err = g.rw.Write(g.wbuf)
	}
	if err != nil {
		g.werr = fmt.Errorf("wasm: writing to the host: %w: %w", peer.ErrProcFailed, err)
		return g.werr
	}
	return nil
}

// A vecWriter writes two buffers as one write.
type vecWriter interface {
	writeVec(a, b []byte) error
}

// Dial implements peer.Dialer: it asks the host to connect to rank and
// waits for the link (which the reader attached to the endpoint first).
func (g *Guest) Dial(ctx context.Context, rank int) (peer.Link, error) {
	if rank < 0 || rank >= len(g.slots) || rank == g.welcome.Rank {
		return nil, fmt.Errorf("wasm: dial rank %d of %d", rank, len(g.slots))
	}
	g.mu.Lock()
	s := &g.slots[rank]
	if s.link == nil && s.err == nil && g.dead != nil {
		s.err = g.dead
	}
	if s.link != nil || s.err != nil {
		l, err := s.link, s.err
		g.mu.Unlock()
		return linkOrErr(l, err)
	}
	if s.done == nil {
		s.done = make(chan struct{})
	}
	ask := !s.asked
	s.asked = true
	done := s.done
	g.mu.Unlock()
	if ask {
		if err := g.write(AppendConnect(g.lockWrite(), rank)); err != nil {
			return nil, err
		}
	}
	select {
	case <-done:
		g.mu.Lock()
		l, err := s.link, s.err
		g.mu.Unlock()
		return linkOrErr(l, err)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// linkOrErr keeps a nil *guestLink from becoming a non-nil peer.Link.
func linkOrErr(l *guestLink, err error) (peer.Link, error) {
	if l == nil {
		return nil, err
	}
	return l, nil
}

// readLoop handles the host's messages until the stream ends.
func (g *Guest) readLoop() {
	defer close(g.readDone)
	for {
		m, err := g.rd.Next()
		if err == nil {
			err = g.handle(&m)
		}
		if err != nil {
			g.fail(err)
			g.cutOff(err)
			return
		}
	}
}

// cutOff fails every other rank of the job at the endpoint when the host
// ended the stream (not the guest's Close): no message reaches this rank
// any more, so its pending operations with ranks it had no link to must
// fail too, or the program waits forever (and the Go runtime ends it with
// "all goroutines are asleep" when nothing else runs).
func (g *Guest) cutOff(err error) {
	if g.closing.Load() {
		return
	}
	g.failOthers(streamEnded(err))
}

// failOthers fails every other rank of the job at the endpoint with err.
func (g *Guest) failOthers(err error) {
	for r := range g.welcome.Limit() {
		if r != g.welcome.Rank {
			g.ep.FailPeer(r, err)
		}
	}
}

func (g *Guest) handle(m *Msg) error {
	if m.Type == MsgNameAnswer {
		return g.answer(m)
	}
	if m.Type == MsgReport {
		f := g.report.Load()
		if f == nil {
			return fmt.Errorf("%w: report request before report-ready", ErrProtocol)
		}
		(*f)()
		return nil
	}
	if m.Type == MsgEvicted {
		g.evict(procFailure(m.Text))
		return nil
	}
	if m.Type == MsgAbort {
		switch {
		case m.Rank == g.welcome.Rank: // the host told the job of ours
			g.ackOnce.Do(func() { close(g.abortAck) })
		case m.Rank < len(g.slots) && g.aborted != nil:
			g.aborted(m.Rank, m.Code, m.Text)
		}
		return nil
	}
	switch m.Type {
	case MsgLinkUp, MsgLinkDown, MsgData, MsgCredit:
	default:
		return fmt.Errorf("%w: unexpected %v message from the host", ErrProtocol, m.Type)
	}
	if m.Rank >= len(g.slots) || m.Rank == g.welcome.Rank {
		return fmt.Errorf("%w: %v message for rank %d of %d", ErrProtocol, m.Type, m.Rank, len(g.slots))
	}
	g.mu.Lock()
	s := &g.slots[m.Rank]
	l := s.link
	switch m.Type {
	case MsgLinkUp:
		if l != nil || s.err != nil {
			g.mu.Unlock()
			return fmt.Errorf("%w: second link to rank %d", ErrProtocol, m.Rank)
		}
		g.mu.Unlock()
		return g.linkUp(m)
	case MsgLinkDown:
		err := linkDownError(m.Rank, m.Text)
		if l == nil && s.err == nil {
			s.err = err
			if s.done != nil {
				close(s.done)
			}
		}
		g.mu.Unlock()
		if l != nil {
			l.down(err)
		}
		if m.Cause == CauseLeft {
			g.ep.FailPeer(m.Rank, err)
		}
		return nil
	}
	g.mu.Unlock()
	if l == nil {
		if s.err != nil {
			return nil // sent before the host saw the link fail
		}
		return fmt.Errorf("%w: %v message for rank %d before its link", ErrProtocol, m.Type, m.Rank)
	}
	if m.Type == MsgCredit {
		l.credit(int(m.N))
		return nil
	}
	if len(m.Frame) > l.maxFrame {
		return fmt.Errorf("%w: %d-byte frame from rank %d exceeds %d", ErrProtocol, len(m.Frame), m.Rank, l.maxFrame)
	}
	l.deliver(m.Frame)
	return nil
}

// linkDownError is the error of a link-down for rank: the host's text,
// which usually names the rank and says "process failed" already, so it
// is neither prefixed nor wrapped twice; it matches peer.ErrProcFailed.
func linkDownError(rank int, text string) error {
	if !strings.Contains(text, "rank "+strconv.Itoa(rank)) {
		text = "rank " + strconv.Itoa(rank) + ": " + text
	}
	return procFailure(text)
}

// procFailure is a failure as the host described it, matching
// peer.ErrProcFailed, which the text usually says already.
func procFailure(text string) error {
	if strings.HasSuffix(text, ": "+peer.ErrProcFailed.Error()) || strings.Contains(text, ": "+peer.ErrProcFailed.Error()+": ") {
		return hostFailure(text)
	}
	return fmt.Errorf("%s: %w", text, peer.ErrProcFailed)
}

// evict ends this rank's part in the job, which the host says evicted it
// (err): OnEvicted's function first, then the endpoint closes with err
// (an endpoint without Close(error) has every other rank fail), so that
// nothing the program waits for hangs and nothing goes on without the
// job.
func (g *Guest) evict(err error) {
	if g.evicted != nil {
		g.evicted(err)
	}
	if c, ok := g.ep.(interface{ Close(error) }); ok {
		c.Close(err)
		return
	}
	g.failOthers(err)
}

// hostFailure is a failure as the host described it.
type hostFailure string

func (e hostFailure) Error() string { return string(e) }
func (e hostFailure) Unwrap() error { return peer.ErrProcFailed }

// linkUp attaches a new link to the endpoint (which binds it before the
// next message is read, so its frames always find the handler), then
// hands it to a Dial waiting for it.
func (g *Guest) linkUp(m *Msg) error {
	l := &guestLink{g: g, rank: m.Rank, maxFrame: int(m.N), high: int(m.Window), low: int(m.Window) / 4}
	// credit goes back in eighths of the window, whatever the frame size:
	// what the guest holds back stays below the quarter at which the host
	// resumes a link it stopped (a batch of a whole frame, once frames
	// could be as large as a quarter of the window, could hold back more
	// and stop that link for good); a frame that large is credited alone
	l.batch = max(1, int(m.Window)/8)
	err := g.ep.Attach(m.Rank, l)
	g.mu.Lock()
	s := &g.slots[m.Rank]
	if err != nil {
		s.err = peer.Failure(fmt.Sprintf("rank %d", m.Rank), err)
	} else {
		s.link = l
	}
	if s.done != nil {
		close(s.done)
	}
	g.mu.Unlock()
	if err != nil {
		l.Close()
	}
	return nil
}

// streamEnded is the error of operations the stream's end failed.
func streamEnded(err error) error {
	if errors.Is(err, peer.ErrProcFailed) {
		return err
	}
	return fmt.Errorf("wasm: the host stream ended: %w: %w", peer.ErrProcFailed, err)
}

// fail ends every link and dial once the stream is gone.
func (g *Guest) fail(err error) {
	err = streamEnded(err)
	g.mu.Lock()
	g.dead = err
	for id, ch := range g.calls {
		ch <- nameAnswer{err: err}
		delete(g.calls, id)
	}
	var links []*guestLink
	for i := range g.slots {
		s := &g.slots[i]
		switch {
		case s.link != nil:
			links = append(links, s.link)
		case s.err == nil:
			s.err = err
			if s.done != nil {
				close(s.done)
			}
		}
	}
	g.mu.Unlock()
	for _, l := range links {
		l.down(err)
	}
}

// guestLink is a peer.Link to one remote rank through the host. Its
// backpressure is credit: WriteFrame reports not ready once the bytes the
// host has not yet handed to its real link reach the window, and
// HandleWritable follows when the host's credit brings them to a quarter
// of it — the data channel's bufferedAmount model, one hop earlier.
type guestLink struct {
	g         *Guest
	rank      int
	maxFrame  int
	high, low int
	batch     int // credit returned to the host in steps of at least this

	mu       sync.Mutex
	h        peer.LinkHandler
	inflight int  // written, not yet credited by the host
	stalled  bool // WriteFrame reported not ready
	closed   bool // closed here, or down
	unacked  int  // bytes delivered, not yet credited to the host (reader only)
}

func (l *guestLink) Bind(h peer.LinkHandler) {
	l.mu.Lock()
	l.h = h
	l.mu.Unlock()
}

func (l *guestLink) MaxFrame() int { return l.maxFrame }

// Path implements peer.PathReporter: the link is a stream through the
// host, which holds the WebRTC link (and reports its ICE path to the
// signaling server itself).
func (l *guestLink) Path() peer.Path { return peer.Path{Link: "wasi-host"} }

func (l *guestLink) WriteFrame(hdr, payload []byte) (bool, error) {
	n := len(hdr) + len(payload)
	if n > l.maxFrame {
		return false, fmt.Errorf("wasm link: %d-byte frame exceeds %d", n, l.maxFrame)
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false, peer.ErrClosed
	}
	l.inflight += n
	ready := l.inflight < l.high
	if !ready {
		l.stalled = true
	}
	l.mu.Unlock()
	var err error
	if len(payload) >= LandMin {
		// the head, then the payload from where it is
		err = l.g.writeVec(AppendDataHead(l.g.lockWrite(), l.rank, hdr, len(payload)), payload)
	} else {
		err = l.g.write(AppendData(l.g.lockWrite(), l.rank, hdr, payload))
	}
	if err != nil {
		return false, err
	}
	return ready, nil
}

// Close implements peer.Link: the host closes the real link, so the
// remote sees HandleClose.
func (l *guestLink) Close() error {
	l.mu.Lock()
	was := l.closed
	l.closed = true
	l.mu.Unlock()
	if !was {
		_ = l.g.write(AppendClose(l.g.lockWrite(), l.rank)) // a dead stream closes everything anyway
	}
	return nil
}

// down reports the link lost to its handler, once.
func (l *guestLink) down(err error) {
	l.mu.Lock()
	was, h := l.closed, l.h
	l.closed = true
	l.mu.Unlock()
	if !was && h != nil {
		h.HandleClose(err)
	}
}

// deliver hands a frame to the handler and returns credit to the host in
// batches. Reader goroutine only.
func (l *guestLink) deliver(f []byte) {
	l.mu.Lock()
	h, closed := l.h, l.closed
	l.mu.Unlock()
	if closed || h == nil {
		return
	}
	hdr, payload := f, []byte(nil)
	if len(f) > peer.HeaderLen {
		hdr, payload = f[:peer.HeaderLen], f[peer.HeaderLen:]
	}
	h.HandleFrame(hdr, payload)
	l.consumed(len(f))
}

// consumed counts n bytes of frames handled and returns credit to the
// host in batches. Reader goroutine only.
func (l *guestLink) consumed(n int) {
	if l.unacked += n; l.unacked >= l.batch {
		n := l.unacked
		l.unacked = 0
		_ = l.g.write(AppendCredit(l.g.lockWrite(), l.rank, n)) // a failed write ends the stream
	}
}

// land offers the handler a data frame's payload, n bytes still in the
// stream (Reader.Land): a rendezvous payload then crosses into the
// guest's memory once, straight into its receive buffer. Reader
// goroutine only.
func (l *guestLink) land(hdr []byte, n int, read func(dst []byte) error) bool {
	l.mu.Lock()
	h, closed := l.h, l.closed
	l.mu.Unlock()
	if closed || h == nil || peer.HeaderLen+n > l.maxFrame {
		return false // deliver drops it, or handle refuses it
	}
	d, ok := h.(peer.DataLander)
	if !ok || !d.LandData(hdr, n, read) {
		return false
	}
	l.consumed(peer.HeaderLen + n)
	return true
}

// land is the Reader's Land hook: the data message's link, if it has
// one, lands it.
func (g *Guest) land(rank int, hdr []byte, n int, read func(dst []byte) error) bool {
	if rank >= len(g.slots) || rank == g.welcome.Rank {
		return false // handle refuses it
	}
	g.mu.Lock()
	l := g.slots[rank].link
	g.mu.Unlock()
	return l != nil && l.land(hdr, n, read)
}

// credit takes the host's credit and wakes a stalled writer at low water.
func (l *guestLink) credit(n int) {
	l.mu.Lock()
	l.inflight = max(0, l.inflight-n)
	wake := l.stalled && l.inflight <= l.low && !l.closed
	if wake {
		l.stalled = false
	}
	h := l.h
	l.mu.Unlock()
	if wake && h != nil {
		h.HandleWritable()
	}
}

// GuestKeyOK reports whether a join carries the guest's half of key: the
// host's check that it talks to the guest it started.
func GuestKeyOK(join Msg, key [KeyLen]byte) bool {
	return join.Type == MsgJoin && subtle.ConstantTimeCompare(join.Key[:], key[halfKey:]) == 1
}
