//go:build !js

package signaling

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// conn is one rank's connection as the hub sees it. Its messages go out
// over a wire: the websocket this server accepted, or, in a cluster, the
// bus to the server that holds the rank's websocket (cluster.go).
//
// A websocket conn has one goroutine for good, its reader (run, serve,
// readLoop: the HTTP handler starts it and returns, so net/http's state
// for the request goes). Its writer (write) runs while its queue holds
// messages or it is being closed, and its pings run from a timer
// (heartbeat), each in a goroutine of its own only while it waits for its
// pong. A conn of the cluster bus has a writer for good (writeLoop),
// which wake wakes.
//
// What an idle joined connection costs the server is a bar of its own
// (issue 21: at most 30 KB, measured by cmd/signalload): its bufio
// buffers are small (acceptBuffers), the handler's stack and net/http's
// request state are gone, its reader's stack is what reading needs
// (serve), and no goroutine of its own waits between pings.
type conn struct {
	s      *Server
	ws     *websocket.Conn // the websocket it reads from; nil for a rank another server holds
	wire   wire            // where its messages go
	remote string

	// bridge is set on a websocket conn whose job another server of the
	// cluster serves: its frames go there, and that server's answers
	// come back through its queue (cluster.go). Reader goroutine only.
	bridge *bridge

	// The outbound queue: send appends, the writer (write) takes the
	// whole batch.
	// A slice rather than a buffered channel of SendQueue entries, which
	// would cost every idle connection SendQueue*24 bytes up front.
	qmu    sync.Mutex
	queue  [][]byte
	queued int // bytes in queue
	// A websocket conn's writer: writing says one runs, ended that one
	// has closed the wire after kill (no other starts). Under qmu.
	writing, ended bool
	writers        sync.WaitGroup
	// writes is the context of the writer's writes; cancelling it aborts
	// a write stuck on a peer that does not read (and closes the socket).
	writes      context.Context
	abortWrites context.CancelFunc

	unresponsive atomic.Bool // a ping went unanswered: the peer is frozen or gone

	// The heartbeat (a websocket conn's only): beat fires when a ping is
	// due (pingSent zero) or when the one in flight has waited
	// PingTimeout for its pong. Guarded by beatMu.
	beatMu   sync.Mutex
	beat     *time.Timer
	beatDone bool           // run ended, or a pong never came: no more pings
	pingAt   time.Time      // when the next ping is due
	pingSent time.Time      // when the ping in flight went; zero if none
	pings    sync.WaitGroup // heartbeats running

	killOnce sync.Once
	killed   chan struct{}
	killErr  *Error // sent before the close; nil for none
	killHard bool   // close without a handshake

	// Set by join under Server.mu; read by the reader goroutine afterwards.
	job   *job
	rank  int
	kind  ClientKind
	print string // the certificate fingerprint it announced (Join.Fingerprint)
	abort *Abort // the rank called Abort; it is leaving (under Server.mu)
	// leaving: the rank said it is leaving cleanly (Leaving): reports of
	// its closed links declare nothing (under Server.mu)
	leaving bool
	// waits counts the lookups it parked in job.waiting, at most
	// MaxWaitingLookups (under Server.mu)
	waits  int
	bucket bucket // reader goroutine only
	// heard is when the last message came (unix ns): a rank heard from
	// within PingInterval is not pinged (heartbeat).
	heard atomic.Int64
	// grace ends the wait of a seat for its rank to resume (detach).
	grace *time.Timer
	// joinTimer kills a websocket conn that does not join in time.
	joinTimer *time.Timer
}

func (b *bucket) allow(now time.Time) bool { return b.take(now) == 0 }

// wire carries one connection's messages out.
type wire interface {
	// write sends one encoded message.
	write(ctx context.Context, data []byte) error
	// ping checks that the far end answers. Nil for a wire whose far
	// end another server pings.
	ping(ctx context.Context) error
	// end sends e, if not nil, as the last message and closes: with the
	// close handshake unless hard.
	end(e *Error, hard bool, timeout time.Duration)
	// closeNow closes at once.
	closeNow()
}

// wsWire is a websocket this server accepted.
type wsWire struct{ ws *websocket.Conn }

func (w wsWire) write(ctx context.Context, data []byte) error {
	return w.ws.Write(ctx, websocket.MessageText, data)
}

func (w wsWire) ping(ctx context.Context) error { return w.ws.Ping(ctx) }

func (w wsWire) end(e *Error, hard bool, timeout time.Duration) {
	if e != nil {
		if data, err := Encode(e); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			_ = w.ws.Write(ctx, websocket.MessageText, data)
			cancel()
		}
		if !hard {
			_ = w.ws.Close(closeStatus(e.Code), string(e.Code))
		}
	}
	_ = w.ws.CloseNow()
}

func (w wsWire) closeNow() { _ = w.ws.CloseNow() }

func newConn(s *Server, ws *websocket.Conn, remote string) *conn {
	c := newWireConn(s, wsWire{ws}, remote)
	c.ws = ws
	return c
}

// newWireConn makes a conn whose messages go out over w.
func newWireConn(s *Server, w wire, remote string) *conn {
	writes, abort := context.WithCancel(context.Background())
	return &conn{
		writes:      writes,
		abortWrites: abort,
		s:           s,
		wire:        w,
		remote:      remote,
		killed:      make(chan struct{}),
		bucket:      bucket{rate: s.cfg.MessageRate, burst: float64(s.cfg.MessageBurst)},
	}
}

// kill asks the writer to send e (if not nil) and close the connection. Only
// the first call counts. It never blocks and takes no lock, so it may be called
// with Server.mu held.
func (c *conn) kill(e *Error, hard bool) {
	c.killOnce.Do(func() {
		c.killErr, c.killHard = e, hard
		if e != nil {
			c.s.countRejected(e.Code)
		}
		close(c.killed)
		if c.wire != nil {
			c.qmu.Lock()
			c.startWriter() // it sends e and closes
			c.qmu.Unlock()
		}
	})
}

func (c *conn) isKilled() bool {
	select {
	case <-c.killed:
		return true
	default:
		return false
	}
}

// jobID and rankOrNeg read the join state for logs; they take Server.mu.
func (c *conn) jobID() string {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.job == nil {
		return ""
	}
	return c.job.id
}

func (c *conn) rankOrNeg() int {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.job == nil {
		return -1
	}
	return c.rank
}

// send queues m without blocking; a full queue kills the connection.
func (c *conn) send(m Message) {
	data, err := Encode(m)
	if err != nil {
		c.s.log.Error("encode failed", "type", m.Type(), "err", err)
		c.kill(&Error{Code: CodeInternal, Message: "server failed to encode a message"}, false)
		return
	}
	c.sendData(data)
}

// sendData queues an encoded message; broadcasts encode once and share it.
func (c *conn) sendData(data []byte) {
	c.qmu.Lock()
	// (any one message fits an empty queue: a Ready of a big job may be
	// larger than the bytes limit)
	if len(c.queue) >= c.s.cfg.SendQueue || len(c.queue) > 0 && c.queued+len(data) > c.s.cfg.SendQueueBytes {
		c.qmu.Unlock()
		// it cannot take even the error message: drop it now rather than
		// after the write it is stuck in times out
		c.kill(&Error{Code: CodeSlowConsumer, Message: "outbound queue full"}, true)
		c.abortWrites()
		return
	}
	c.queue = append(c.queue, data)
	c.queued += len(data)
	c.startWriter()
	c.qmu.Unlock()
	c.s.sent.Add(1)
}

// push queues messages already encoded and counted (a seat's, handed
// over to the conn that takes it: reseat) in order, past the queue's
// bounds, which they kept where they were, and starts the writer.
func (c *conn) push(data ...[]byte) {
	c.qmu.Lock()
	for _, d := range data {
		c.queue = append(c.queue, d)
		c.queued += len(d)
	}
	c.startWriter()
	c.qmu.Unlock()
}

// startWriter starts the conn's writer unless one runs, the connection
// is closed, or it has no wire (a seat waiting for its rank to resume:
// its messages wait in its queue). qmu is held.
func (c *conn) startWriter() {
	if c.writing || c.ended || c.wire == nil {
		return
	}
	c.writing = true
	c.writers.Add(1)
	go c.write()
}

// write is a websocket conn's writer: it writes what is queued until the
// queue is empty, and ends; once c is killed, it sends killErr (if any)
// instead, closes the connection, and no writer starts again.
func (c *conn) write() {
	defer c.writers.Done()
	var batch [][]byte
	for {
		c.qmu.Lock()
		if c.isKilled() {
			c.writing, c.ended = false, true
			c.queue, c.queued = nil, 0
			c.qmu.Unlock()
			c.end()
			return
		}
		if len(c.queue) == 0 {
			c.writing = false
			c.qmu.Unlock()
			return
		}
		batch, c.queue = c.queue, batch[:0]
		c.queued = 0
		c.qmu.Unlock()
		if !c.writeBatch(batch) {
			c.qmu.Lock()
			c.writing, c.ended = false, true
			c.qmu.Unlock()
			return
		}
	}
}

// writeBatch writes batch and clears it; on a failed write it kills and
// closes the connection and reports false.
func (c *conn) writeBatch(batch [][]byte) bool {
	for i, data := range batch {
		batch[i] = nil
		ctx, cancel := context.WithTimeout(c.writes, c.s.cfg.WriteTimeout)
		err := c.wire.write(ctx, data)
		cancel()
		if err != nil {
			clear(batch)
			c.kill(nil, true)
			c.wire.closeNow()
			return false
		}
	}
	return true
}

// end sends killErr, if any, and closes the wire.
func (c *conn) end() {
	if e := c.killErr; e != nil {
		c.s.log.Info("closing connection", "remote", c.remote, "job", c.jobID(), "rank", c.rankOrNeg(), "code", e.Code, "msg", e.Message)
	}
	c.wire.end(c.killErr, c.killHard, c.s.cfg.WriteTimeout)
}

// broadcast encodes m once and queues it for every conn in to that is not nil.
func (s *Server) broadcast(m Message, to []*conn) {
	data, err := Encode(m)
	if err != nil {
		s.log.Error("encode failed", "type", m.Type(), "err", err)
		return
	}
	for _, c := range to {
		if c != nil {
			c.sendData(data)
		}
	}
}

// reject answers a connection that was never registered, then closes it.
func (c *conn) reject(e *Error) {
	c.s.countRejected(e.Code)
	ctx, cancel := context.WithTimeout(context.Background(), c.s.cfg.WriteTimeout)
	defer cancel()
	if data, err := Encode(e); err == nil {
		_ = c.ws.Write(ctx, websocket.MessageText, data)
	}
	_ = c.ws.Close(closeStatus(e.Code), string(e.Code))
}

func closeStatus(code ErrorCode) websocket.StatusCode {
	switch code {
	case CodeShutdown:
		return websocket.StatusGoingAway
	case CodeTooManyConns, CodeTooManyJobs:
		return websocket.StatusTryAgainLater
	case CodeTooLarge:
		return websocket.StatusMessageTooBig
	case CodeInternal:
		return websocket.StatusInternalError
	}
	return websocket.StatusPolicyViolation
}

// run serves a registered websocket conn until it closes, and then
// unregisters it.
func (c *conn) run() {
	// We bound message sizes ourselves (readLoop) so that an oversized
	// message gets an error message rather than a bare close.
	c.ws.SetReadLimit(-1)
	c.startBeat()
	c.joinTimer = time.AfterFunc(c.s.cfg.JoinTimeout, func() {
		c.s.mu.Lock()
		joined := c.job != nil || c.bridge != nil // a bridge's home times its join
		c.s.mu.Unlock()
		if !joined {
			c.kill(&Error{Code: CodeJoinTimeout, Message: "no join in time"}, false)
		}
	})
	c.serve(true)
}

// errFreshStack ends a reader that hands the reading on to a fresh
// goroutine (serve).
var errFreshStack = errors.New("reading goes on in a fresh goroutine")

// serve reads until the connection ends, then closes it and unregisters
// it. A goroutine's stack keeps the size its deepest moment needed, and
// a rank's deepest is its first message, the Join (token check, admission,
// Welcome, logs): after it the reading goes on in a fresh goroutine
// (first is false there), whose stack is what reading and pongs need —
// half as large for the idle rank that most ranks are once their job
// formed.
func (c *conn) serve(first bool) {
	err := c.readLoop(first)
	if errors.Is(err, errFreshStack) {
		go c.serve(false)
		return
	}
	c.joinTimer.Stop()
	if b := c.bridge; b != nil {
		b.closed(c, err)
	} else {
		c.s.leave(c, err)
	}
	c.kill(nil, true)
	c.writers.Wait()
	_ = c.ws.CloseNow()
	c.stopBeat()
	c.abortWrites()
	c.s.unregister(c)
}

// The heartbeat pings a websocket every PingInterval and drops it when a
// pong takes longer than PingTimeout (Config.PingInterval). Its timer
// fires on a grid of ticks, min(PingInterval, PingTimeout)/beatTicks
// apart (125 ms by default): a server's pings due within one tick go out
// together and their pongs come back together, so 10,000 idle
// connections wake the server 16 times per interval instead of 10,000
// times (an eighth less CPU for an idle server: docs/signaling-load.md).
// A ping is late by a tick at most, and so is the drop of a peer whose
// pong does not come.
const beatTicks = 16

// startBeat arms the heartbeat of a websocket conn: its first ping is
// due PingInterval from now.
func (c *conn) startBeat() {
	c.beatMu.Lock()
	defer c.beatMu.Unlock()
	c.pingAt = time.Now().Add(c.s.cfg.PingInterval)
	c.beat = time.AfterFunc(c.untilTick(c.pingAt), c.heartbeat)
}

// stopBeat stops the heartbeat and waits for a ping in flight (the
// connection is closed, so its wait ends).
func (c *conn) stopBeat() {
	c.beatMu.Lock()
	c.beatDone = true
	if c.beat != nil {
		c.beat.Stop()
	}
	c.beatMu.Unlock()
	c.pings.Wait()
}

// untilTick is how long from now until the first tick of the grid at or
// after t.
func (c *conn) untilTick(t time.Time) time.Duration {
	tick := int64(max(min(c.s.cfg.PingInterval, c.s.cfg.PingTimeout)/beatTicks, time.Millisecond))
	at := t.UnixNano()
	at += (tick - at%tick) % tick
	return max(0, time.Until(time.Unix(0, at)))
}

// heartbeat runs when c's timer fires: it sends the ping that is due and
// waits for its pong (blocking no other goroutine: the timer started this
// one), or acts on a pong that did not come in time. A peer that does not
// answer within PingTimeout is frozen or gone: a rank of a formed job is
// declared failed (declareFrozen), any other connection is dropped (and
// its departure announced) like a closed one.
func (c *conn) heartbeat() {
	timeout := c.pongTimeout()
	c.beatMu.Lock()
	if c.beatDone {
		c.beatMu.Unlock()
		return
	}
	// the timer may fire a little before its tick by the wall clock, and
	// a firing may be stale (the state changed and re-armed it): a
	// deadline still ahead re-arms it for that deadline
	now := time.Now()
	slack := time.Duration(int64(max(min(c.s.cfg.PingInterval, c.s.cfg.PingTimeout)/beatTicks, time.Millisecond)) / 2)
	if !c.pingSent.IsZero() {
		deadline := c.pingSent.Add(timeout)
		if now.Add(slack).Before(deadline) {
			c.beat.Reset(c.untilTick(deadline))
			c.beatMu.Unlock()
			return
		}
		c.beatDone = true
		c.beatMu.Unlock()
		c.noPong()
		return
	}
	if heard := time.Unix(0, c.heard.Load()); heard.Add(c.s.cfg.PingInterval).After(c.pingAt) {
		// the rank spoke since (its heartbeat, Limits.HeartbeatMillis):
		// it is alive, no ping needed before an interval of silence
		c.pingAt = heard.Add(c.s.cfg.PingInterval)
	}
	if now.Add(slack).Before(c.pingAt) {
		c.beat.Reset(c.untilTick(c.pingAt))
		c.beatMu.Unlock()
		return
	}
	sent := now
	c.pingSent = sent
	c.beat.Reset(c.untilTick(sent.Add(timeout)))
	c.pings.Add(1)
	c.beatMu.Unlock()
	defer c.pings.Done()

	// no deadline of its own: the timer above ends a wait that takes
	// too long, closing the connection, which ends this one
	err := c.wire.ping(context.Background())

	c.beatMu.Lock()
	if c.beatDone || !c.pingSent.Equal(sent) {
		c.beatMu.Unlock()
		return // the pong came too late, or the connection ended
	}
	c.pingSent = time.Time{}
	if err != nil {
		c.beatDone = true
		c.beatMu.Unlock()
		if !errors.Is(err, net.ErrClosed) {
			// the ping could not go (a write held the socket past
			// coder/websocket's 5 s for a control frame): a peer
			// that does not read. A closed connection is the
			// reader's to end (a rank that left cleanly is not a
			// frozen one)
			c.noPong()
		}
		return
	}
	c.pingAt = sent.Add(c.s.cfg.PingInterval)
	c.beat.Reset(c.untilTick(c.pingAt))
	c.beatMu.Unlock()
}

// formingPongs is how many PingTimeouts a rank whose job has not formed
// has to answer a ping. Until then nobody's computation waits on its
// failure being known, while dropping it fails the whole formation: a
// tab of a lab still loading its program on a busy laptop, or a server
// starved past PingTimeout between a pong's arrival and its handling,
// is not a dead rank (TestBrowserLabCourse lost two of three ranks of a
// forming job so under CI's load).
const formingPongs = 4

// pongTimeout is how long c's peer has to answer a ping: PingTimeout in
// a formed job, formingPongs times that before.
func (c *conn) pongTimeout() time.Duration {
	c.s.mu.Lock()
	formed := c.job != nil && c.job.started
	c.s.mu.Unlock()
	if formed {
		return c.s.cfg.PingTimeout
	}
	return formingPongs * c.s.cfg.PingTimeout
}

// noPong drops c, whose pong did not come within PingTimeout, unless it
// is closing anyway.
func (c *conn) noPong() {
	if c.isKilled() {
		return
	}
	c.s.log.Info("no pong", "remote", c.remote, "timeout", c.pongTimeout())
	if c.s.declareFrozen(c) {
		return
	}
	c.unresponsive.Store(true)
	c.kill(nil, true)
	c.wire.closeNow() // the writer may be stuck in a write to the frozen peer
}

// overDrain bounds how much of an oversized message readLoop reads past
// the limit so that its sender can read the error (CodeTooLarge).
const overDrain = 4 * MaxMessageBytes

// readLoop reads until the connection fails or closes. After a violation it
// keeps reading (and discarding) so that the close handshake can complete.
// With handOff it returns errFreshStack after the first message (serve).
func (c *conn) readLoop(handOff bool) error {
	limit := int64(c.s.cfg.MaxMessageBytes)
	for {
		typ, r, err := c.ws.Reader(context.Background())
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			return err
		}
		if int64(len(data)) > limit {
			// Read (and drop) what is left of a message up to overDrain
			// bytes over the limit: closing a socket with unread bytes
			// resets it, and the reset can destroy the error message in
			// the peer's receive buffer before the peer reads it. Past
			// overDrain the peer is hostile, and a reset is what it gets.
			_, _ = io.Copy(io.Discard, io.LimitReader(r, overDrain))
			c.kill(&Error{Code: CodeTooLarge, Message: fmt.Sprintf("message larger than %d bytes", limit)}, true)
			return ErrTooLarge
		}
		c.heard.Store(time.Now().UnixNano())
		if b := c.bridge; b != nil {
			b.forward(c, data) // its job's server checks it
		} else {
			c.receive(typ == websocket.MessageText, data)
		}
		if handOff {
			return errFreshStack
		}
	}
}

// receive checks and acts on one message a rank sent: read from its
// websocket, or passed on by the cluster server that holds it.
func (c *conn) receive(text bool, data []byte) {
	if c.isKilled() {
		return
	}
	if !c.bucket.allow(time.Now()) {
		c.kill(&Error{Code: CodeRateLimited, Message: fmt.Sprintf("more than %g messages/s (burst %d)", c.s.cfg.MessageRate, c.s.cfg.MessageBurst)}, false)
		return
	}
	if !text {
		c.kill(&Error{Code: CodeBadMessage, Message: "binary message"}, false)
		return
	}
	m, err := Decode(data)
	if err != nil {
		c.kill(&Error{Code: CodeBadMessage, Message: truncate(err.Error())}, false)
		return
	}
	if j, ok := m.(*Join); ok && c.ws != nil && c.s.cfg.Cluster != nil && c.s.bridgeJoin(c, j, data) {
		return // its job is served elsewhere: c is a bridge now
	}
	if e := c.handle(m); e != nil {
		c.kill(e, false)
	}
}

// Sizes of a websocket's bufio buffers (acceptBuffers). net/http hands a
// hijacked connection 4 KiB for each; signaling messages are mostly a few
// hundred bytes, and a larger one bypasses a bufio buffer that is empty,
// so small buffers cost a second write or read for the rare large
// message (an SDP, a big job's Ready) and save 7 KiB per idle rank.
const (
	readBufferSize  = 512
	writeBufferSize = 1024
)

// acceptBuffers is the http.ResponseWriter websocket.Accept gets: its
// Hijack gives the connection bufio buffers of readBufferSize and
// writeBufferSize instead of net/http's.
type acceptBuffers struct{ http.ResponseWriter }

// Hijack implements http.Hijacker.
func (w acceptBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	// (through any wrappers that unwrap to net/http's, as Accept's own
	// hijack would)
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// bytes the client sent after its request, already read into
	// net/http's buffer, stay buffered in the new one: Accept keeps
	// what is buffered (and nothing else) when it resets the reader
	br := bufio.NewReaderSize(nc, readBufferSize)
	if n := brw.Reader.Buffered(); n > 0 {
		pending, _ := brw.Reader.Peek(n)
		br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(pending)), nc), max(readBufferSize, n))
		if _, err := br.Peek(n); err != nil {
			_ = nc.Close()
			return nil, nil, fmt.Errorf("hijack: %w", err)
		}
	}
	return nc, bufio.NewReadWriter(br, bufio.NewWriterSize(nc, writeBufferSize)), nil
}
