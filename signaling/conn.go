//go:build !js

package signaling

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// conn is one rank's connection as the hub sees it. Its messages go out
// over a wire: the websocket this server accepted, or, in a cluster, the
// bus to the server that holds the rank's websocket (cluster.go). A
// websocket conn is served by two goroutines: the HTTP handler reads
// (run, readLoop), and writeLoop writes queued messages and pings.
type conn struct {
	s      *Server
	ws     *websocket.Conn // the websocket it reads from; nil for a rank another server holds
	wire   wire            // where its messages go
	remote string

	// bridge is set on a websocket conn whose job another server of the
	// cluster serves: its frames go there, and that server's answers
	// come back through its queue (cluster.go). Reader goroutine only.
	bridge *bridge

	// The outbound queue: send appends, writeLoop takes the whole batch.
	// A slice rather than a buffered channel of SendQueue entries, which
	// would cost every idle connection SendQueue*24 bytes up front.
	qmu    sync.Mutex
	queue  [][]byte
	queued int           // bytes in queue
	wake   chan struct{} // cap 1: the queue is not empty
	// writes is the context of the writer's writes; cancelling it aborts
	// a write stuck on a peer that does not read (and closes the socket).
	writes      context.Context
	abortWrites context.CancelFunc

	pinging      atomic.Bool    // a ping waits for its pong
	unresponsive atomic.Bool    // a ping went unanswered: the peer is frozen or gone
	pings        sync.WaitGroup // ping goroutines

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
	// grace ends the wait of a seat for its rank to resume (detach).
	grace *time.Timer
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
		wake:        make(chan struct{}, 1),
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
	c.qmu.Unlock()
	c.s.sent.Add(1)
	select {
	case c.wake <- struct{}{}:
	default:
	}
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

func (c *conn) run() {
	// We bound message sizes ourselves (readLoop) so that an oversized
	// message gets an error message rather than a bare close.
	c.ws.SetReadLimit(-1)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	joinTimer := time.AfterFunc(c.s.cfg.JoinTimeout, func() {
		c.s.mu.Lock()
		joined := c.job != nil || c.bridge != nil // a bridge's home times its join
		c.s.mu.Unlock()
		if !joined {
			c.kill(&Error{Code: CodeJoinTimeout, Message: "no join in time"}, false)
		}
	})
	err := c.readLoop()
	joinTimer.Stop()
	if b := c.bridge; b != nil {
		b.closed(c, err)
	} else {
		c.s.leave(c, err)
	}
	c.kill(nil, true)
	<-writerDone
	_ = c.ws.CloseNow()
	c.pings.Wait()
	c.abortWrites()
}

func (c *conn) writeLoop() {
	var pings <-chan time.Time // a bridged rank's own server pings it
	if c.ws != nil {
		ping := time.NewTicker(c.s.cfg.PingInterval)
		defer ping.Stop()
		pings = ping.C
	}
	var batch [][]byte
	for {
		select {
		case <-c.wake:
			c.qmu.Lock()
			batch, c.queue = c.queue, batch[:0]
			c.queued = 0
			c.qmu.Unlock()
			for i, data := range batch {
				batch[i] = nil
				ctx, cancel := context.WithTimeout(c.writes, c.s.cfg.WriteTimeout)
				err := c.wire.write(ctx, data)
				cancel()
				if err != nil {
					c.kill(nil, true)
					c.wire.closeNow()
					return
				}
			}
			if cap(batch) > 64 {
				batch = nil // a burst's queue is not kept for the connection's life
			}
		case <-pings:
			// The ping runs beside the writer, which a pong that takes
			// its time must not hold up; one at a time.
			if c.pinging.CompareAndSwap(false, true) {
				c.pings.Add(1)
				go c.ping()
			}
		case <-c.killed:
			if e := c.killErr; e != nil {
				c.s.log.Info("closing connection", "remote", c.remote, "job", c.jobID(), "rank", c.rankOrNeg(), "code", e.Code, "msg", e.Message)
			}
			c.wire.end(c.killErr, c.killHard, c.s.cfg.WriteTimeout)
			return
		}
	}
}

// ping sends a websocket ping and waits for its pong; a peer that does not
// answer within PingTimeout is frozen or gone: a rank of a formed job is
// declared failed (declareFrozen), any other connection is dropped (and
// its departure announced) like a closed one.
func (c *conn) ping() {
	defer c.pings.Done()
	ctx, cancel := context.WithTimeout(context.Background(), c.s.cfg.PingTimeout)
	err := c.wire.ping(ctx)
	cancel()
	c.pinging.Store(false)
	if err != nil && !c.isKilled() {
		c.s.log.Info("no pong", "remote", c.remote, "err", err)
		if c.s.declareFrozen(c) {
			return
		}
		c.unresponsive.Store(true)
		c.kill(nil, true)
		c.wire.closeNow() // the writer may be stuck in a write to the frozen peer
	}
}

// readLoop reads until the connection fails or closes. After a violation it
// keeps reading (and discarding) so that the close handshake can complete.
func (c *conn) readLoop() error {
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
			// The rest of the message is unread: no handshake possible.
			c.kill(&Error{Code: CodeTooLarge, Message: fmt.Sprintf("message larger than %d bytes", limit)}, true)
			return ErrTooLarge
		}
		if b := c.bridge; b != nil {
			b.forward(c, data) // its job's server checks it
			continue
		}
		c.receive(typ == websocket.MessageText, data)
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
