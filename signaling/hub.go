//go:build !js

package signaling

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// job is a room of fixed size: its world. Guarded by Server.mu.
type job struct {
	id      string
	claims  Claims
	members []*conn // by rank; nil when absent
	present int
	started bool // Ready was sent: no more joins
}

// conn is one websocket connection. Two goroutines serve it: the HTTP handler
// reads (run, readLoop), and writeLoop writes queued messages and pings.
type conn struct {
	s      *Server
	ws     *websocket.Conn
	remote string
	out    chan []byte

	killOnce sync.Once
	killed   chan struct{}
	killErr  *Error // sent before the close; nil for none
	killHard bool   // close without a handshake

	// Set by join under Server.mu; read by the reader goroutine afterwards.
	job  *job
	rank int
	kind ClientKind

	bucket bucket // reader goroutine only
}

func (b *bucket) allow(now time.Time) bool { return b.take(now) == 0 }

func newConn(s *Server, ws *websocket.Conn, remote string) *conn {
	return &conn{
		s:      s,
		ws:     ws,
		remote: remote,
		out:    make(chan []byte, s.cfg.SendQueue),
		killed: make(chan struct{}),
		bucket: bucket{rate: s.cfg.MessageRate, burst: float64(s.cfg.MessageBurst)},
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
	select {
	case c.out <- data:
	default:
		c.kill(&Error{Code: CodeSlowConsumer, Message: "outbound queue full"}, false)
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
		joined := c.job != nil
		c.s.mu.Unlock()
		if !joined {
			c.kill(&Error{Code: CodeJoinTimeout, Message: "no join in time"}, false)
		}
	})
	err := c.readLoop()
	joinTimer.Stop()
	c.s.leave(c, err)
	c.kill(nil, true)
	<-writerDone
	_ = c.ws.CloseNow()
}

func (c *conn) writeLoop() {
	ping := time.NewTicker(c.s.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case data := <-c.out:
			ctx, cancel := context.WithTimeout(context.Background(), c.s.cfg.WriteTimeout)
			err := c.ws.Write(ctx, websocket.MessageText, data)
			cancel()
			if err != nil {
				c.kill(nil, true)
				_ = c.ws.CloseNow()
				return
			}
		case <-ping.C:
			ctx, cancel := context.WithTimeout(context.Background(), c.s.cfg.PingTimeout)
			err := c.ws.Ping(ctx)
			cancel()
			if err != nil {
				c.s.log.Info("ping failed", "remote", c.remote, "err", err)
				c.kill(nil, true)
				_ = c.ws.CloseNow()
				return
			}
		case <-c.killed:
			if e := c.killErr; e != nil {
				c.s.log.Info("closing connection", "remote", c.remote, "job", c.jobID(), "rank", c.rankOrNeg(), "code", e.Code, "msg", e.Message)
				if data, err := Encode(e); err == nil {
					ctx, cancel := context.WithTimeout(context.Background(), c.s.cfg.WriteTimeout)
					_ = c.ws.Write(ctx, websocket.MessageText, data)
					cancel()
				}
				if !c.killHard {
					_ = c.ws.Close(closeStatus(e.Code), string(e.Code))
				}
			}
			_ = c.ws.CloseNow()
			return
		}
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
		if c.isKilled() {
			continue
		}
		if !c.bucket.allow(time.Now()) {
			c.kill(&Error{Code: CodeRateLimited, Message: fmt.Sprintf("more than %g messages/s (burst %d)", c.s.cfg.MessageRate, c.s.cfg.MessageBurst)}, false)
			continue
		}
		if typ != websocket.MessageText {
			c.kill(&Error{Code: CodeBadMessage, Message: "binary message"}, false)
			continue
		}
		m, err := Decode(data)
		if err != nil {
			c.kill(&Error{Code: CodeBadMessage, Message: truncate(err.Error())}, false)
			continue
		}
		if e := c.handle(m); e != nil {
			c.kill(e, false)
		}
	}
}

func truncate(s string) string {
	if len(s) > MaxTextLen {
		return s[:MaxTextLen]
	}
	return s
}

// handle acts on one decoded message; a non-nil result is fatal.
func (c *conn) handle(m Message) *Error {
	switch m := m.(type) {
	case *Join:
		return c.s.join(c, m)
	case *Signal:
		return c.s.relay(c, m)
	case *Ping:
		c.send(&Pong{ID: m.ID})
		return nil
	case *Pong:
		return nil
	}
	return &Error{Code: CodeProtocol, Message: fmt.Sprintf("clients may not send %q", m.Type())}
}

func (s *Server) join(c *conn, m *Join) *Error {
	claims, err := VerifyToken(s.cfg.Secret, m.Token, m.Job, time.Now())
	switch {
	case errors.Is(err, ErrExpired):
		return &Error{Code: CodeExpiredToken, Message: "token expired"}
	case err != nil:
		return &Error{Code: CodeBadToken, Message: "token invalid or for another job"}
	}
	if claims.Size > s.cfg.MaxJobSize {
		return &Error{Code: CodeJobMismatch, Message: fmt.Sprintf("job size %d above the server's limit %d", claims.Size, s.cfg.MaxJobSize)}
	}
	if m.Rank != nil && *m.Rank >= claims.Size {
		return &Error{Code: CodeBadRank, Message: fmt.Sprintf("rank %d outside [0, %d)", *m.Rank, claims.Size)}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if c.job != nil {
		return &Error{Code: CodeProtocol, Message: "already joined"}
	}
	j := s.jobs[m.Job]
	if j == nil {
		if len(s.jobs) >= s.cfg.MaxJobs {
			return &Error{Code: CodeTooManyJobs, Message: fmt.Sprintf("server holds %d jobs", s.cfg.MaxJobs)}
		}
		j = &job{id: m.Job, claims: claims, members: make([]*conn, claims.Size)}
		s.jobs[m.Job] = j
	} else if !j.claims.sameWorld(claims) {
		return &Error{Code: CodeJobMismatch, Message: "token's size or settings differ from the job's"}
	}
	if j.started {
		return &Error{Code: CodeJobFull, Message: "job already started"}
	}
	rank := -1
	if m.Rank != nil {
		if j.members[*m.Rank] != nil {
			return &Error{Code: CodeRankTaken, Message: fmt.Sprintf("rank %d already joined", *m.Rank)}
		}
		rank = *m.Rank
	} else {
		for r, mem := range j.members {
			if mem == nil {
				rank = r
				break
			}
		}
	}
	if rank < 0 {
		return &Error{Code: CodeJobFull, Message: "all ranks joined"}
	}
	j.members[rank] = c
	j.present++
	c.job, c.rank, c.kind = j, rank, m.Kind
	s.joins.Add(1)
	s.log.Info("rank joined", "job", j.id, "rank", rank, "size", claims.Size, "kind", m.Kind, "remote", c.remote)
	c.send(&Welcome{
		Protocol: Version, Job: j.id, Rank: rank, Size: claims.Size,
		ICEServers: s.cfg.ICEServers, Settings: claims.Settings,
		Limits: &Limits{MessageRate: s.cfg.MessageRate, MessageBurst: s.cfg.MessageBurst, MessageBytes: s.cfg.MaxMessageBytes},
	})
	if j.present == claims.Size {
		j.started = true
		kinds := make([]ClientKind, claims.Size)
		for r, mem := range j.members {
			kinds[r] = mem.kind
		}
		ready := &Ready{Size: claims.Size, Kinds: kinds}
		for _, mem := range j.members {
			mem.send(ready)
		}
		s.log.Info("job ready", "job", j.id, "size", claims.Size)
	}
	return nil
}

func (s *Server) relay(c *conn, m *Signal) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil {
		return &Error{Code: CodeProtocol, Message: "signal before join"}
	}
	if m.To >= len(j.members) || m.To == c.rank {
		return &Error{Code: CodeBadRank, Message: fmt.Sprintf("signal to rank %d in a job of size %d from rank %d", m.To, len(j.members), c.rank)}
	}
	dst := j.members[m.To]
	if dst == nil {
		s.countRejected(CodeRankAbsent)
		c.send(&Error{Code: CodeRankAbsent, Message: fmt.Sprintf("rank %d is not present", m.To)})
		return nil
	}
	m.From = c.rank
	dst.send(m)
	s.relayed.Add(1)
	return nil
}

// leave removes c from its job and tells the others.
func (s *Server) leave(c *conn, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil || j.members[c.rank] != c {
		return
	}
	j.members[c.rank] = nil
	j.present--
	reason := "connection closed"
	if c.isKilled() && c.killErr != nil { // killErr is set before killed closes
		reason = string(c.killErr.Code)
	}
	s.log.Info("rank left", "job", j.id, "rank", c.rank, "reason", reason, "err", cause)
	for _, mem := range j.members {
		if mem != nil {
			mem.send(&Left{Rank: c.rank, Reason: reason})
		}
	}
	if j.present == 0 {
		delete(s.jobs, j.id)
	}
}
