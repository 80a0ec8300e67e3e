//go:build !js && !wasip1

package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/mesh"
	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/wasm"
)

// Flow control between host and guest, per link and per direction.
const (
	// Window is how many bytes of one link's frames may be in flight
	// between host and guest before the sender waits for credit: the
	// guest's link reports not ready at Window (as a data channel does at
	// its high-water mark) and becomes writable again at Window/4; the
	// host stops reading a link whose frames the guest has not consumed.
	// Four of the largest frames (wasm.MaxFrame), so a stream of 1 MiB
	// messages keeps the hop busy while credit comes back.
	Window = 4 << 20
	// creditBatch is the host's step for returning credit to the guest:
	// at most this much is held back, below the guest's low-water mark,
	// so a guest that stalled always gets writable again.
	creditBatch = Window / 8
)

// Job names the job a hosted rank joins and its seat in it.
type Job struct {
	Signal string // websocket URL of the signaling server's /ws endpoint
	ID     string // job id
	Token  string // job token
	Rank   int    // the rank to take, or meshmpi.AnyRank
	// JoinTimeout bounds the wait for the whole job; 0 means
	// meshmpi.DefaultJoinTimeout.
	JoinTimeout time.Duration
}

// Config is what Serve needs besides the stream.
type Config struct {
	Job Job
	// Key is the stream's key (wasm.KeyLen): the host presents one half,
	// the guest the other (the zero key on a stream no one else can
	// reach).
	Key    [wasm.KeyLen]byte
	Logger *slog.Logger // nil discards
	// Reports, when set, is how a launcher asks the guest for its report
	// once the guest said it answers (report.go); nil: no one asks.
	Reports *Reports

	// Agent says what runs the rank, for the signaling server's
	// dashboards (signaling.DialOptions.Agent); "" says "meshmpi wasip1".
	Agent string

	// console is the guest's standard output and error, which the relay
	// reports when the job's telemetry is on; nil: the host does not see
	// them (set by Program.Run)
	console *consoleTap
}

// Serve is the host's side of one guest rank's stream (wasm's package
// doc has the protocol): it greets the guest, joins the job for it when
// it asks (signaling.Dial and mesh.New, with this relay as the mesh's
// endpoint), tells it the welcome, and then relays links, frames, credit
// and departures until the stream ends. Leaving the stream ends the
// guest's membership of the job: its links close and it leaves the
// signaling server, so the other ranks see ErrProcFailed for anything
// still involving it.
//
// Serve returns nil when the guest closes the stream, ctx's cause when
// ctx ends first, and an error wrapping wasm.ErrProtocol when the guest
// breaks the protocol; then the stream is closed and the guest fails,
// but the host and its other ranks go on. rw is closed on return.
func Serve(ctx context.Context, rw io.ReadWriteCloser, cfg Config) (err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	r := &relay{rw: rw, log: log, ctx: ctx, cancel: cancel, out: newOutQueue(), stopWriter: make(chan struct{}), reports: cfg.Reports,
		console: cfg.console}
	stopWatch := watchStream(ctx, rw, r.endStream)
	defer func() {
		stopWatch()
		cause := context.Cause(ctx) // before teardown ends ctx
		r.teardown()
		switch {
		case err == nil || errors.Is(err, wasm.ErrProtocol) || cause == nil:
		case cause == errGuestDone:
			err = nil // the guest left while the host waited for it
		default:
			err = fmt.Errorf("wasm host: %w", cause)
		}
	}()
	br := bufio.NewReaderSize(rw, 64<<10)
	rd := wasm.NewReader(br)
	if _, err := rw.Write(wasm.AppendHostHello(nil, cfg.Key)); err != nil {
		return fmt.Errorf("wasm host: greeting the guest: %w", err)
	}
	m, err := rd.Next()
	switch {
	case errors.Is(err, io.EOF):
		return nil // the program never joined a job: not a rank, or it exited first
	case err != nil:
		return fmt.Errorf("wasm host: waiting for the guest to join: %w", err)
	case m.Type != wasm.MsgJoin:
		return fmt.Errorf("%w: guest sent %v instead of join", wasm.ErrProtocol, m.Type)
	case !wasm.GuestKeyOK(m, cfg.Key):
		return fmt.Errorf("%w: the guest's join does not carry its key", wasm.ErrProtocol)
	case m.Version != wasm.Version:
		msg := fmt.Sprintf("the host speaks protocol version %d, the guest %d", wasm.Version, m.Version)
		_, _ = rw.Write(wasm.AppendRefused(nil, msg))
		return fmt.Errorf("wasm host: %s: %w", msg, peer.ErrNotSupported)
	}
	welcome, err := r.join(cfg.Job, cfg.Agent)
	if err != nil {
		_, _ = rw.Write(wasm.AppendRefused(nil, err.Error()))
		return err
	}
	r.writerDone = make(chan struct{})
	gs, _ := rw.(guestSocket)
	var rc syscall.RawConn
	if gs != nil {
		if rc, err = gs.SyscallConn(); err != nil {
			rc = nil
		}
	}
	if rc != nil {
		// the guest pulls its messages from the queue, the welcome first
		// (see "Why the guest pulls its messages")
		if beforePull != nil {
			beforePull()
		}
		gs.onGuestRead(r.out)
		r.out.setPull(welcome, gs.ring)
	} else if _, err := rw.Write(welcome); err != nil {
		return fmt.Errorf("wasm host: welcoming the guest: %w", err)
	}
	r.out.setDirect(true)
	go r.writer()
	if rc == nil {
		return r.readLoop(rd)
	}
	// the guest says nothing between its join and the welcome, but what
	// the handshake's reader buffered goes first all the same
	pre, _ := br.Peek(br.Buffered())
	s := newStreamReader(rc, pre, r.handle, func() { _ = gs.SetReadDeadline(time.Now()) })
	r.stream.Store(s)
	if r.ctx.Err() != nil {
		// the guest exited while this was being set up: watchStream
		// may have looked for the stream before it was stored
		r.endAfterExit(s)
	}
	gs.onGuestWrite(s)
	return r.readStream(s)
}

// guestSocket is a stream that is a socket the host can read and write
// without blocking, whose guest can be rung and hands over its writes
// (ringingConn): the relay then takes the guest's messages on the
// guest's goroutine too, from its memory (stream.go), and writes a
// memory link's frames without a hand-off to the writer
// (HandleFrameFlow).
type guestSocket interface {
	io.ReadWriteCloser
	SyscallConn() (syscall.RawConn, error)
	SetReadDeadline(time.Time) error
	ring()
	onGuestWrite(s *streamReader)
	onGuestRead(q *outQueue)
}

// beforePull, set by a test, runs before a guest's queue is set: it
// lets the guest park first.
var beforePull func()

// errGuestDone is the cause that ends a relay whose guest closed the
// stream or exited: no error, the guest's exit status tells how it went.
var errGuestDone = errors.New("the guest left")

// guestDrain bounds the reading of what a guest wrote before it exited
// (drainAfterExit): its end of the stream is closed, so the end of the
// stream normally comes at once.
const guestDrain = 5 * time.Second

// watchStream ends the stream when ctx ends: it closes it, unless the
// guest exited; then end ends it after what the guest wrote last
// (false: it cannot, and drainAfterExit bounds the wait instead).
func watchStream(ctx context.Context, rw io.ReadWriteCloser, end func() bool) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		if context.Cause(ctx) == errGuestDone && (end() || drainAfterExit(rw)) {
			return
		}
		rw.Close()
	})
}

// endStream ends the stream of a guest that exited once the reader has
// what the guest wrote (streamReader.endAfterExit); false if the relay
// reads no socket (yet).
func (r *relay) endStream() bool {
	s := r.stream.Load()
	if s == nil {
		return false
	}
	r.endAfterExit(s)
	return true
}

// endAfterExit ends s, the stream of a guest that exited, after what the
// guest wrote, saying so first: the end lets Serve and the guest's Run
// return, and a line logged after it could come after Run's caller had
// looked (TestGuestExitEndsStream, in CI).
func (r *relay) endAfterExit(s *streamReader) {
	r.log.Debug("guest stream ended after its exit", "rank", r.rank)
	s.endAfterExit()
}

// drainAfterExit keeps the stream of a guest that exited open for
// reading, with a deadline, instead of closing it: the reader still
// relays what the guest wrote last, up to the end of the stream. Those
// are frames a rank sends just before it leaves — a barrier's decision
// for its children in the tree of Disconnect or Finalize — and closing
// the stream under them dropped them: the children waited for the
// decision forever (cmd/meshrun TestGrowExample, once the guest's host
// linked over shm, where its last frames left before the host read
// them). It reports false for a stream that cannot bound the wait,
// which is then closed as before.
func drainAfterExit(rw io.ReadWriteCloser) bool {
	d, ok := rw.(interface{ SetReadDeadline(time.Time) error })
	return ok && d.SetReadDeadline(time.Now().Add(guestDrain)) == nil
}

// relay is the host's state for one guest rank. It implements
// mesh.Endpoint: the mesh hands it the rank's links and departures.
type relay struct {
	rw     io.ReadWriteCloser
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelCauseFunc
	m      *mesh.Mesh
	names  nameService // r.m's
	rank   int
	limit  int // the most ranks the job can hold (Welcome.Limit): ranks below it are peers

	reports *Reports // Config's; nil: no one asks

	console *consoleTap    // Config's
	tel     *hostTelemetry // what the guest reports, when the job's telemetry is on

	out        *outQueue
	stream     atomic.Pointer[streamReader] // the guest's stream, once the relay reads it as a socket
	stopWriter chan struct{}
	writerDone chan struct{} // nil until the writer starts

	mu      sync.Mutex
	links   []*hostLink
	dialing []bool
	calls   map[uint32]*nameCall // the guest's name requests being served, by id
	closed  bool
	wg      sync.WaitGroup // dials, name requests, and the word that the guest leaves

	leaveOnce sync.Once
}

// join joins the job for the guest and returns the guest's welcome
// message, which Serve delivers.
func (r *relay) join(job Job, agent string) ([]byte, error) {
	d := job.JoinTimeout
	if d <= 0 {
		d = meshmpi.DefaultJoinTimeout
	}
	ctx, cancel := context.WithTimeoutCause(r.ctx, d,
		fmt.Errorf("the job did not form within %v: %w", d, peer.ErrProcFailed))
	defer cancel()
	var do signaling.DialOptions
	if job.Rank != meshmpi.AnyRank {
		do.Rank = &job.Rank
	}
	do.Kind = signaling.KindWASI
	do.Agent = agent
	if agent == "" {
		do.Agent = "meshmpi wasip1"
	}
	// the host holds the guest's links: its certificate is the rank's
	id, err := peer.NewIdentity()
	if err != nil {
		return nil, fmt.Errorf("wasm host: %w", err)
	}
	do.Fingerprint = id.Fingerprint()
	// the host's other guests wait for this one's mesh if they hear of
	// it first: a memory link, whatever the order
	release := mesh.Reserve(do.Fingerprint)
	defer release()
	client, err := signaling.Dial(ctx, job.Signal, job.ID, job.Token, &do)
	if err != nil {
		return nil, fmt.Errorf("wasm host: %w", err)
	}
	w := client.Welcome()
	if err := meshmpi.CheckSettings(w.Settings); err != nil {
		client.Close()
		return nil, fmt.Errorf("wasm host: %w", err)
	}
	net := mesh.Net{ICEServers: w.ICEServers, Loopback: w.Settings[meshmpi.SettingNetwork] == "loopback", Identity: id,
		Aborted: func(rank, code int, reason string) {
			r.mu.Lock()
			if !r.closed {
				r.push(wasm.AppendAbort(r.out.lock(), rank, code, reason))
			}
			r.mu.Unlock()
		}}
	// a job that may grow has late ranks Size … Max-1, and this rank may
	// be one: the tables hold every rank the job can
	r.rank, r.limit = w.Rank, w.Limit()
	r.links, r.dialing = make([]*hostLink, r.limit), make([]bool, r.limit)
	r.m = mesh.New(client, net)
	r.names = r.m
	if ts, err := meshmpi.ReadTelemetry(w.Settings); err == nil && ts.On {
		// the guest sends its operations (wasm.MsgTelemetry); its links
		// and console are the host's to see
		r.tel = &hostTelemetry{max: ts.Ops, console: r.console.start()}
		r.m.StartTelemetry(mesh.Telemetry{Interval: ts.Interval, Source: r.tel})
	}
	r.m.Start(r)
	if err := r.m.WaitReady(ctx); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", err, context.Cause(ctx))
		}
		return nil, fmt.Errorf("wasm host: join job %q as rank %d: %w", job.ID, w.Rank, err)
	}
	r.log.Debug("joined", "job", job.ID, "rank", w.Rank, "size", w.Size, "max", w.Max, "late", w.Late)
	gw := wasm.Welcome{Rank: w.Rank, Size: w.Size, Late: w.Late, Settings: w.Settings}
	if r.limit > w.Size {
		gw.Max = r.limit
	}
	return wasm.AppendWelcome(nil, gw), nil
}

// readStream is readLoop over a socket (stream.go).
func (r *relay) readStream(s *streamReader) error {
	err := s.run()
	switch {
	case errors.Is(err, wasm.ErrProtocol):
		return fmt.Errorf("wasm host: rank %d: %w", r.rank, err)
	case r.ctx.Err() != nil:
		return context.Cause(r.ctx)
	default:
		r.log.Debug("guest stream ended", "rank", r.rank, "err", err)
		r.cancel(errGuestDone)
		return nil
	}
}

// readLoop handles the guest's messages until the stream ends.
func (r *relay) readLoop(rd *wasm.Reader) error {
	for {
		m, err := rd.Next()
		if err == nil {
			err = r.handle(&m)
		}
		switch {
		case err == nil:
		case errors.Is(err, wasm.ErrProtocol):
			return fmt.Errorf("wasm host: rank %d: %w", r.rank, err)
		case r.ctx.Err() != nil:
			return context.Cause(r.ctx)
		default:
			// the guest closed its stream, or exited (which may reset it):
			// either way it left, and its exit status says how
			r.log.Debug("guest stream ended", "rank", r.rank, "err", err)
			r.cancel(errGuestDone)
			return nil
		}
	}
}

func (r *relay) handle(m *wasm.Msg) error {
	switch m.Type {
	case wasm.MsgName:
		return r.name(m)
	case wasm.MsgNameCancel:
		r.cancelName(m.ID)
		return nil
	case wasm.MsgReportReady: // the guest answers report: its launcher may ask
		r.reports.set(r, nil)
		return nil
	case wasm.MsgTelemetry: // offered to every guest; kept if the job reports
		if r.tel != nil {
			r.tel.add(m)
		}
		return nil
	}
	if m.Type == wasm.MsgAbort {
		if m.Rank != r.rank {
			return fmt.Errorf("%w: guest (rank %d) sent an abort for rank %d", wasm.ErrProtocol, r.rank, m.Rank)
		}
		r.m.Abort(m.Code, m.Text) // the job learns it is over
		r.push(wasm.AppendAbort(r.out.lock(), r.rank, m.Code, m.Text))
		return nil
	}
	switch m.Type {
	case wasm.MsgConnect, wasm.MsgClose, wasm.MsgData, wasm.MsgCredit:
	default:
		return fmt.Errorf("%w: guest sent %v after joining", wasm.ErrProtocol, m.Type)
	}
	if m.Rank >= r.limit || m.Rank == r.rank {
		return fmt.Errorf("%w: guest's %v names rank %d (it is rank %d of at most %d)", wasm.ErrProtocol, m.Type, m.Rank, r.rank, r.limit)
	}
	r.mu.Lock()
	hl := r.links[m.Rank]
	if m.Type == wasm.MsgConnect {
		dial := hl == nil && !r.dialing[m.Rank] && !r.closed
		if dial {
			r.dialing[m.Rank] = true
			r.wg.Add(1)
		}
		r.mu.Unlock()
		if dial {
			go r.dial(m.Rank)
		}
		return nil
	}
	r.mu.Unlock()
	if hl == nil {
		return fmt.Errorf("%w: guest's %v for rank %d, which has no link", wasm.ErrProtocol, m.Type, m.Rank)
	}
	switch m.Type {
	case wasm.MsgClose:
		if !hl.isDead() {
			// the guest closes a live link on its own: it is leaving
			// (Finalize), so its peers' reports of the closed links
			// must not get it declared failed
			r.leaveOnce.Do(func() {
				r.wg.Add(1)
				go func() {
					defer r.wg.Done()
					r.m.Leave()
				}()
			})
		}
		hl.closeReal()
	case wasm.MsgCredit:
		hl.credit(int(m.N))
	case wasm.MsgData:
		return hl.forward(m.Frame, m.Payload)
	}
	return nil
}

// dial connects to rank for the guest; the link reaches the guest through
// Attach, a failure as LinkDown.
func (r *relay) dial(rank int) {
	defer r.wg.Done()
	_, err := r.m.Dial(r.ctx, rank)
	if err != nil {
		r.mu.Lock()
		up := r.links[rank] != nil
		r.mu.Unlock()
		if !up {
			r.push(wasm.AppendLinkDown(r.out.lock(), rank, wasm.CauseDialFailed, err.Error()))
		}
	}
}

func (r *relay) push(b []byte) { r.out.push(b) }

// pushNow is push from a link's reader, which holds no lock of the
// relay's: when no write to the guest is under way it writes the queue
// itself rather than waking the writer, a goroutine hand-off less on
// every frame's way to the guest (BenchmarkRelay's ping-pong).
func (r *relay) pushNow(b []byte) {
	b, ok := r.out.pushTake(b)
	if !ok {
		return // the writer, or another link's reader, writes it
	}
	if _, err := r.rw.Write(b); err != nil {
		r.log.Debug("writing to the guest failed", "rank", r.rank, "err", err)
		r.cancel(errGuestDone)
	}
	r.out.give(b)
}

// Attach implements mesh.Endpoint: the guest learns of the link before
// any of its frames.
func (r *relay) Attach(rank int, l peer.Link) error {
	if rank < 0 || rank >= r.limit || rank == r.rank {
		return fmt.Errorf("wasm host: attach rank %d of at most %d", rank, r.limit)
	}
	if l.MaxFrame() <= peer.HeaderLen {
		return fmt.Errorf("wasm host: link to rank %d carries %d-byte frames", rank, l.MaxFrame())
	}
	hl := &hostLink{r: r, rank: rank, l: l, maxFrame: min(l.MaxFrame(), wasm.MaxFrame)}
	hl.cond.L = &hl.mu
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return fmt.Errorf("wasm host: the guest left: %w", peer.ErrClosed)
	case r.links[rank] != nil:
		r.mu.Unlock()
		return fmt.Errorf("wasm host: rank %d already has a link", rank)
	}
	r.links[rank] = hl
	r.push(wasm.AppendLinkUp(r.out.lock(), rank, hl.maxFrame, Window))
	r.mu.Unlock()
	l.Bind(hl)
	return nil
}

// FailPeer implements mesh.Endpoint: the rank left the job.
func (r *relay) FailPeer(rank int, err error) {
	if rank < 0 || rank >= r.limit || rank == r.rank {
		return
	}
	r.mu.Lock()
	hl := r.links[rank]
	if !r.closed {
		r.push(wasm.AppendLinkDown(r.out.lock(), rank, wasm.CauseLeft, err.Error()))
	}
	r.mu.Unlock()
	if hl != nil {
		hl.closeReal()
	}
}

// Close implements the mesh's closable endpoint: the job declared the
// guest's rank failed and went on without it, or ended under it (err
// says which). The guest is told so (wasm.MsgEvicted), and ends as an
// evicted native rank does, where every other rank's departure would
// have let a fault-tolerant program go on as a job of one; the links
// close. The stream stays open for the guest to read it and leave.
func (r *relay) Close(err error) {
	r.mu.Lock()
	if !r.closed {
		r.push(wasm.AppendEvicted(r.out.lock(), err.Error()))
	}
	links := slices.Clone(r.links)
	r.mu.Unlock()
	r.log.Debug("evicted", "rank", r.rank, "err", err)
	for _, hl := range links {
		if hl != nil {
			hl.closeReal()
		}
	}
}

// writer sends the queued messages to the guest.
func (r *relay) writer() {
	defer close(r.writerDone)
	for {
		b, ok := r.out.take(r.stopWriter)
		if !ok {
			return
		}
		if _, err := r.rw.Write(b); err != nil {
			// the guest closed its stream or exited, as when the read side
			// ends (readLoop): it left, and its exit status says how. A
			// guest that exits while the host still has news for it (a
			// peer's departure, say) is not an error of the host's.
			r.log.Debug("writing to the guest failed", "rank", r.rank, "err", err)
			r.cancel(errGuestDone)
			r.out.give(b)
			return
		}
		r.out.give(b)
	}
}

// teardown leaves the job for the guest: links close, the mesh closes
// (the server announces the departure), every goroutine of the relay
// ends.
func (r *relay) teardown() {
	r.cancel(errGuestDone)
	r.reports.set(nil, r)
	r.mu.Lock()
	r.closed = true
	links := r.links
	r.mu.Unlock()
	for _, hl := range links {
		if hl != nil {
			hl.closeReal()
		}
	}
	if r.m != nil {
		r.m.Close()
	}
	r.wg.Wait()
	close(r.stopWriter)
	r.rw.Close()
	if r.writerDone != nil {
		<-r.writerDone
	}
}

// hostLink relays one real link (a WebRTC data channel) to the guest:
// it is the link's handler, and the guest's frames for the rank go to
// its WriteFrame.
type hostLink struct {
	r        *relay
	rank     int
	l        peer.Link
	maxFrame int

	mu   sync.Mutex
	cond sync.Cond // unacked fell, or dead
	// host → guest
	unacked int  // bytes queued for the guest, not yet credited
	dead    bool // the real link is gone or closed
	held    bool // HandleFrameFlow reported not ready: the real link's writer waits for Resume
	// guest → host
	pending int  // bytes forwarded, not yet credited to the guest
	blocked bool // the real link reported not ready
	rearm   bool // HandleWritable came during a WriteFrame
}

// HandleFrame implements peer.LinkHandler: the frame goes to the guest
// once the guest has room for it. Waiting here holds back this link's
// reader only, so its data channel's own flow control pushes back on the
// remote and no other link stalls.
func (hl *hostLink) HandleFrame(hdr, payload []byte) {
	n := len(hdr) + len(payload)
	hl.mu.Lock()
	for hl.unacked >= Window && !hl.dead {
		hl.cond.Wait()
	}
	if hl.dead {
		hl.mu.Unlock()
		return
	}
	hl.unacked += n
	hl.mu.Unlock()
	hl.r.pushNow(wasm.AppendData(hl.r.out.lock(), hl.rank, hdr, payload))
}

// HandleFrameFlow implements peer.FlowHandler, for a memory link (two
// hosts in one process, or a host and a goroutine rank), which hands
// frames over on its writer's goroutine: another relay's reader, or a
// native rank's writer. So nothing here waits, neither for the guest's
// credit nor for a write to the guest (the writer goroutine writes the
// queue): two relays that each waited inside the other's hand-over for
// a guest blocked writing to its own stopped reader hung 1 MiB
// all-pairs exchanges. The frame is queued for the guest, and at the
// window the real link's writer is told to stop until the guest's
// credit brings the link to a quarter of it (credit, peer.Resumer).
func (hl *hostLink) HandleFrameFlow(hdr, payload []byte) (ready bool) {
	hl.mu.Lock()
	if hl.dead {
		hl.mu.Unlock()
		return true // the guest has a LinkDown coming
	}
	hl.unacked += len(hdr) + len(payload)
	ready = hl.unacked < Window
	if !ready {
		hl.held = true
	}
	hl.mu.Unlock()
	hl.r.push(wasm.AppendData(hl.r.out.lock(), hl.rank, hdr, payload))
	return ready
}

// HandleWritable implements peer.LinkHandler: the real link drained, so
// the guest gets the credit held back.
func (hl *hostLink) HandleWritable() {
	hl.mu.Lock()
	hl.blocked, hl.rearm = false, true
	n := hl.pending
	hl.pending = 0
	hl.mu.Unlock()
	if n > 0 {
		hl.r.push(wasm.AppendCredit(hl.r.out.lock(), hl.rank, n))
	}
}

// HandleClose implements peer.LinkHandler: the remote closed or the link
// failed. The guest hears of it, and the mesh reports it to the server.
func (hl *hostLink) HandleClose(err error) {
	hl.mu.Lock()
	was := hl.dead
	hl.dead = true
	hl.cond.Broadcast()
	hl.mu.Unlock()
	if !was {
		hl.r.push(wasm.AppendLinkDown(hl.r.out.lock(), hl.rank, wasm.CauseLinkLost, err.Error()))
		hl.r.m.Suspect(hl.rank, err) // the job learns of it, as from a native rank's endpoint
	}
}

// forward writes one of the guest's frames to the real link and returns
// credit unless the link is above its high-water mark.
func (hl *hostLink) forward(f, more []byte) error {
	n := len(f) + len(more)
	if len(f) < peer.HeaderLen || n > hl.maxFrame {
		return fmt.Errorf("%w: guest's %d-byte frame for rank %d (want %d … %d)", wasm.ErrProtocol, n, hl.rank, peer.HeaderLen, hl.maxFrame)
	}
	hdr, payload := f[:peer.HeaderLen], f[peer.HeaderLen:]
	if more != nil {
		if len(payload) > 0 {
			return fmt.Errorf("%w: guest's frame for rank %d in two pieces, the first past its header", wasm.ErrProtocol, hl.rank)
		}
		payload = more
	}
	hl.mu.Lock()
	dead, l := hl.dead, hl.l
	hl.rearm = false
	hl.mu.Unlock()
	if dead {
		return nil // the guest has a LinkDown coming
	}
	ready, err := l.WriteFrame(hdr, payload)
	if err != nil {
		return nil // the link reports its loss through HandleClose
	}
	hl.mu.Lock()
	hl.pending += n
	if !ready && !hl.rearm {
		hl.blocked = true
	}
	credit := 0
	if !hl.blocked && hl.pending >= creditBatch {
		credit, hl.pending = hl.pending, 0
	}
	hl.mu.Unlock()
	if credit > 0 {
		hl.r.push(wasm.AppendCredit(hl.r.out.lock(), hl.rank, credit))
	}
	return nil
}

// credit takes the guest's credit for frames it consumed; a memory
// link's writer that HandleFrameFlow stopped resumes at a quarter of
// the window (the guest holds back less than that: its credit batch is
// an eighth).
func (hl *hostLink) credit(n int) {
	hl.mu.Lock()
	hl.unacked = max(0, hl.unacked-n)
	resume := hl.held && hl.unacked <= Window/4 && !hl.dead
	if resume {
		hl.held = false
	}
	l := hl.l
	hl.cond.Broadcast()
	hl.mu.Unlock()
	if rs, ok := l.(peer.Resumer); ok && resume {
		rs.Resume() // no lock held: a native writer sends what it held back from here
	}
}

// isDead reports whether the real link is gone or closed.
func (hl *hostLink) isDead() bool {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	return hl.dead
}

// closeReal closes the real link (the guest closed its end, the rank
// left, or the guest is gone); the remote sees HandleClose.
func (hl *hostLink) closeReal() {
	hl.mu.Lock()
	hl.dead = true
	hl.cond.Broadcast()
	l := hl.l
	hl.mu.Unlock()
	l.Close()
	// the closed link goes: a host whose guest loses peer after peer
	// (a manager whose workers come and go) keeps none of them
	hl.mu.Lock()
	hl.l = goneLink{}
	hl.mu.Unlock()
}

// goneLink stands in for a hostLink's closed real link.
type goneLink struct{}

func (goneLink) Bind(peer.LinkHandler) {}
func (goneLink) WriteFrame(hdr, payload []byte) (bool, error) {
	return false, fmt.Errorf("wasm host: link closed: %w", peer.ErrProcFailed)
}
func (goneLink) MaxFrame() int { return peer.HeaderLen + 1 }
func (goneLink) Close() error  { return nil }

// Why the guest pulls its messages.
//
// Written to the socket, every byte for a guest crossed the kernel twice
// (the relay's write, the guest's fd_read through wazero), two system
// calls and two copies per frame, besides the copy into this queue. Once
// the relay runs on a wazero guest's socket, the queue is the guest's to
// pull: nothing more is written to the socket, a push rings the guest,
// its poll_oneoff reports the stream readable while the queue holds
// bytes, and its fd_read (poll.go's guestRead) copies them from here
// into its memory, one copy. The socket then carries only the guest's
// writes one way and, the other way, the host's hello, which the guest
// reads whole before it asks to join; so the welcome is the queue's
// first message (setPull), and at the stream's end the socket reports
// it once the queue is read. (A first version wrote the welcome to the
// socket and had the guest read the socket until it was empty before
// the queue; a guest that had read the welcome and parked before the
// queue was set was never told of the queue again: it hung in its first
// collective, about one mixed job in twelve.)

// outQueue is the host's messages to the guest, appended by any goroutine
// into one buffer that the writer swaps out whole: steady state allocates
// nothing, and many small messages go out in one write. One write at a
// time: the writer's or a link reader's (pushTake), whoever finds none
// under way.
type outQueue struct {
	mu  sync.Mutex
	buf []byte
	// pull: the guest's fd_read copies the queue into its memory itself
	// (pullInto), from buf[off:]; no write to the socket is handed out
	// any more, and a push rings the guest (guestRing)
	pull      bool
	off       int
	guestRing atomic.Pointer[func()]
	spare     []byte        // nil while a write is under way
	rest      []byte        // what a write left for the writer (giveRest), before buf
	restOf    []byte        // the buffer rest is the tail of, for give
	direct    bool          // the writer runs, so link readers may write (pushTake)
	wake      chan struct{} // cap 1
}

func newOutQueue() *outQueue {
	return &outQueue{buf: make([]byte, 0, 64<<10), spare: make([]byte, 0, 64<<10), wake: make(chan struct{}, 1)}
}

// lock takes the queue and returns its buffer to append to; push puts
// the result back and releases it.
func (q *outQueue) lock() []byte {
	q.mu.Lock()
	return q.buf
}

func (q *outQueue) push(b []byte) {
	q.buf = b
	q.mu.Unlock()
	q.ring()
}

func (q *outQueue) ring() {
	if f := q.guestRing.Load(); f != nil {
		(*f)()
		return
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// setPull makes the guest read the queue from its memory (pullInto),
// first bytes first (its welcome: what was queued meanwhile follows it),
// and rings the guest. Nothing is written to the guest's socket after
// its hello, which the guest reads before it joins, so the queue is all
// the guest reads from then on.
func (q *outQueue) setPull(first []byte, ring func()) {
	q.mu.Lock()
	b := make([]byte, 0, max(cap(q.buf), len(first)+len(q.buf)))
	q.buf = append(append(b, first...), q.buf...)
	q.pull = true
	q.guestRing.Store(&ring)
	q.mu.Unlock()
	ring()
}

// pending reports whether the guest has bytes to pull.
func (q *outQueue) pending() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pull && len(q.buf) > q.off
}

// pullInto copies the queue's first bytes into iovs (the guest's memory,
// its fd_read's) and returns how many.
func (q *outQueue) pullInto(iovs [][]byte) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	if !q.pull {
		return 0
	}
	for _, p := range iovs {
		k := copy(p, q.buf[q.off:])
		q.off += k
		n += k
		if k < len(p) {
			break
		}
	}
	switch {
	case q.off == len(q.buf):
		q.buf, q.off = q.buf[:0], 0
	case q.off >= 64<<10 && q.off > len(q.buf)/2:
		// the guest reads in pieces while more comes: keep the buffer
		// from growing for ever
		q.buf = q.buf[:copy(q.buf, q.buf[q.off:])]
		q.off = 0
	}
	return n
}

// pushTake is push that takes the queued bytes for its caller to write
// when no write is under way (ok); the caller then gives them back.
func (q *outQueue) pushTake(b []byte) (out []byte, ok bool) {
	q.buf = b
	if q.spare == nil || !q.direct || q.pull {
		q.mu.Unlock()
		q.ring()
		return nil, false
	}
	out, q.buf, q.spare = q.buf, q.spare[:0], nil
	q.mu.Unlock()
	return out, true
}

// take waits for queued bytes and no write under way, and takes them
// all; ok is false once stop is closed.
func (q *outQueue) take(stop <-chan struct{}) (b []byte, ok bool) {
	for {
		q.mu.Lock()
		if q.rest != nil {
			b = q.rest
			q.rest = nil
			q.mu.Unlock()
			return b, true
		}
		if len(q.buf) > 0 && q.spare != nil && !q.pull {
			b, q.buf, q.spare = q.buf, q.spare[:0], nil
			q.mu.Unlock()
			return b, true
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-stop:
			q.setDirect(false)
			return nil, false
		}
	}
}

// setDirect allows or ends writes by link readers: the guest hears
// nothing before its welcome, which the writer's start follows.
func (q *outQueue) setDirect(on bool) {
	q.mu.Lock()
	q.direct = on
	q.mu.Unlock()
}

// give returns a buffer take or pushTake handed out; bytes queued during
// the write wake the writer.
func (q *outQueue) give(b []byte) {
	q.mu.Lock()
	if q.restOf != nil { // b was its rest
		b, q.restOf = q.restOf, nil
	}
	q.spare = b[:0]
	more := len(q.buf) > 0
	q.mu.Unlock()
	if more {
		q.ring()
	}
}

// giveRest hands the writer the part of a buffer pushTake handed out
// that its taker did not write (b[n:]): the writer writes it before
// anything queued since, then gives the buffer back.
func (q *outQueue) giveRest(b []byte, n int) {
	q.mu.Lock()
	q.rest, q.restOf = b[n:], b
	q.mu.Unlock()
	q.ring()
}
