package signaling

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DialOptions tunes Dial. The zero value is fine.
type DialOptions struct {
	// Rank requests a rank; nil takes the next free one.
	Rank *int
	// Kind is this client's kind; empty picks browser under GOOS=js, wasi
	// under GOOS=wasip1 and native otherwise.
	Kind ClientKind
	// Fingerprint is this rank's DTLS certificate fingerprint, which the
	// server vouches for to the job's other ranks (Ready.Fingerprints).
	Fingerprint string
	// Host is this rank's host identity (Join.Host), which the server
	// passes on to the other ranks (Ready.Hosts) so same-host pairs can
	// skip WebRTC; empty picks LocalHost(), "-" announces none.
	Host string
	// Agent says what runs the rank, for the server's dashboards
	// (Join.Agent); empty picks the browser's navigator.userAgent under
	// GOOS=js and "meshmpi <go version> <GOOS>/<GOARCH>" otherwise. It is
	// cut to MaxAgentLen bytes.
	Agent string
	// Queue is how many incoming messages are buffered (default 256). When
	// the buffer is full the client stops reading from the server (under
	// js the browser keeps reading; see the package doc, Wasm).
	Queue int
	// ResumeWait is how long a rank of a cluster (Welcome.Resume) tries
	// to take its seat back through the servers of the URL list when its
	// server is lost or moves it (default DefaultResumeWait).
	ResumeWait time.Duration
}

// DefaultResumeWait is DialOptions.ResumeWait's default: longer than a
// cluster's loss detection (3 s) plus a server's restart of its job.
const DefaultResumeWait = 30 * time.Second

// transport is the websocket under a Client: whole messages in order, no
// framing or protocol knowledge. client_notjs.go implements it with
// coder/websocket, client_js.go with the browser's WebSocket; everything
// the protocol needs (join, welcome, pacing, decoding) stays in this file,
// shared by both.
type transport interface {
	// read waits for the next message; text is false for a binary one.
	read(ctx context.Context) (data []byte, text bool, err error)
	// write sends data as one text message.
	write(ctx context.Context, data []byte) error
	// close closes with a normal-closure handshake and waits for its end.
	close() error
	// closeNow drops the connection without waiting for the peer.
	closeNow() error
}

// Client is one rank's connection to the signaling server.
type Client struct {
	urls    []string // the servers' endpoints, as given
	join    *Join
	welcome Welcome
	wait    time.Duration // DialOptions.ResumeWait

	// wsMu guards the server connection, which a rank of a cluster
	// replaces when it resumes its seat through another server; moved is
	// closed when it was replaced.
	wsMu  sync.Mutex
	ws    transport
	url   string // the current server's endpoint
	moved chan struct{}

	in      chan Message
	done    chan struct{} // closed by Close
	readEnd chan struct{} // closed when the reader goroutine returns

	closeOnce sync.Once
	mu        sync.Mutex
	err       error // why the reader stopped

	paceMu sync.Mutex
	pace   *bucket // the server's rate limit, with a margin; nil if it told none

	sentAt atomic.Int64 // when the last message went (unix ns), for the heartbeat
}

// paceMargin keeps the client this far inside the server's limits: the
// server measures arrivals, which network jitter can bunch up.
const paceMargin = 0.8

func defaultKind() ClientKind {
	switch runtime.GOOS {
	case "js":
		return KindBrowser
	case "wasip1":
		return KindWASI
	}
	return KindNative
}

// Dial connects to the server's websocket endpoint url (ws://host/ws), joins
// job with token and returns once the server has answered with a Welcome. A
// refusal is a *RemoteError (wrapping ErrRejected, and ErrBadToken or
// ErrExpired for token failures).
//
// url may list the endpoints of several servers of a cluster, separated by
// commas: the client joins through the first that answers, and when that
// server is lost (or drains, Move) it takes its seat back through the
// others (Join.Resume) without the caller noticing more than a pause.
func Dial(ctx context.Context, url, job, token string, opts *DialOptions) (_ *Client, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("signaling: join %s at %s: %w", job, url, err)
		}
	}()
	var o DialOptions
	if opts != nil {
		o = *opts
	}
	if o.Kind == "" {
		o.Kind = defaultKind()
	}
	if o.Queue <= 0 {
		o.Queue = 256
	}
	if o.ResumeWait <= 0 {
		o.ResumeWait = DefaultResumeWait
	}
	if o.Agent == "" {
		o.Agent = defaultAgent()
	}
	switch o.Host {
	case "":
		o.Host = LocalHost()
	case "-":
		o.Host = ""
	}
	var urls []string
	for _, u := range strings.Split(url, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%w: no server URL", ErrInvalid)
	}
	join := &Join{Job: job, Token: token, Rank: o.Rank, Kind: o.Kind, Fingerprint: o.Fingerprint, Host: o.Host, Agent: ClipText(o.Agent, MaxAgentLen)}
	// spread a job's ranks over the servers: rank r starts at the r-th,
	// a rank of no rank chosen at one picked at random
	if len(urls) > 1 {
		k := int(uint64(time.Now().UnixNano()) % uint64(len(urls))) // random enough, and no math/rand in a browser rank
		if o.Rank != nil {
			k = *o.Rank % len(urls)
		}
		urls = append(urls[k:len(urls):len(urls)], urls[:k]...)
	}
	var (
		ws   transport
		w    *Welcome
		at   string
		errs []error
	)
	for _, u := range urls {
		ws, w, err = joinAt(ctx, u, join)
		if err == nil {
			at = u
			break
		}
		var re *RemoteError
		if errors.As(err, &re) || ctx.Err() != nil {
			return nil, err // the cluster's answer: another server gives the same
		}
		errs = append(errs, err)
	}
	if ws == nil {
		return nil, errors.Join(errs...)
	}
	c := &Client{
		urls:    urls,
		join:    join,
		url:     at,
		ws:      ws,
		moved:   make(chan struct{}),
		welcome: *w,
		wait:    o.ResumeWait,
		in:      make(chan Message, o.Queue),
		done:    make(chan struct{}),
		readEnd: make(chan struct{}),
	}
	if l := w.Limits; l != nil {
		// the join spent one of the burst's tokens
		burst := max(1, float64(l.MessageBurst)*paceMargin-1)
		c.pace = &bucket{rate: l.MessageRate * paceMargin, burst: burst}
		if l.HeartbeatMillis > 0 {
			c.startHeartbeat(time.Duration(l.HeartbeatMillis) * time.Millisecond)
		}
	}
	go c.readLoop()
	return c, nil
}

// joinAt sends join to the server at url and waits for its Welcome.
func joinAt(ctx context.Context, url string, join *Join) (transport, *Welcome, error) {
	data, err := Encode(join)
	if err != nil {
		return nil, nil, err
	}
	ws, err := dialTransport(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	if err := ws.write(ctx, data); err != nil {
		_ = ws.closeNow()
		return nil, nil, err
	}
	m, err := readMessage(ctx, ws)
	if err != nil {
		_ = ws.closeNow()
		return nil, nil, err
	}
	switch m := m.(type) {
	case *Welcome:
		return ws, m, nil
	case *Error:
		_ = ws.close()
		return nil, nil, &RemoteError{Code: m.Code, Message: m.Message}
	default:
		_ = ws.closeNow()
		return nil, nil, fmt.Errorf("%w: got %s before welcome", ErrInvalid, m.Type())
	}
}

// resume takes the rank's seat back through a server of the list, the
// one at avoid last: its server was lost or moved it. It tries for
// ResumeWait.
func (c *Client) resume(avoid string) error {
	j := *c.join
	rank := c.welcome.Rank
	j.Rank, j.Resume = &rank, c.welcome.Resume
	order := make([]string, 0, len(c.urls))
	for _, u := range c.urls {
		if u != avoid {
			order = append(order, u)
		}
	}
	order = append(order, avoid) // the same server may be back, or alone
	deadline := time.Now().Add(c.wait)
	var last error
	for time.Now().Before(deadline) {
		for _, u := range order {
			ctx, cancel := context.WithTimeout(context.Background(), min(5*time.Second, time.Until(deadline)))
			ws, _, err := joinAt(ctx, u, &j) // the seat's key stays the first Welcome's
			cancel()
			select {
			case <-c.done:
				if ws != nil {
					_ = ws.closeNow()
				}
				return ErrClosed
			default:
			}
			if err == nil {
				c.wsMu.Lock()
				c.ws, c.url = ws, u
				close(c.moved)
				c.moved = make(chan struct{})
				c.wsMu.Unlock()
				return nil
			}
			var re *RemoteError
			if errors.As(err, &re) && re.Code != CodeShutdown && re.Code != CodeInternal && re.Code != CodeTooManyConns {
				return err // the seat is not there to take back
			}
			last = err
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-c.done:
			t.Stop()
			return ErrClosed
		case <-t.C:
		}
	}
	return fmt.Errorf("resume rank %d of %s: no server took it back within %v: %w", rank, j.Job, c.wait, last)
}

// transport is the current server connection, and the channel closed
// when it is replaced.
func (c *Client) transport() (transport, chan struct{}) {
	c.wsMu.Lock()
	defer c.wsMu.Unlock()
	return c.ws, c.moved
}

func readMessage(ctx context.Context, ws transport) (Message, error) {
	data, text, err := ws.read(ctx)
	if err != nil {
		return nil, err
	}
	if !text {
		return nil, fmt.Errorf("%w: binary message", ErrMalformed)
	}
	return Decode(data)
}

func (c *Client) readLoop() {
	defer close(c.readEnd)
	defer close(c.in)
	var last *Error
	for {
		ws, _ := c.transport()
		m, err := readMessage(context.Background(), ws)
		if err == nil {
			if _, ok := m.(*Move); ok && c.welcome.Resume != "" {
				_ = ws.close()
				err = errMoved
			}
		}
		if err != nil {
			select {
			case <-c.done:
				err = ErrClosed // Close ended the connection
			default:
				_ = ws.closeNow()
				if c.welcome.Resume != "" && (last == nil || last.Code == CodeRankAbsent || last.Code == CodeShutdown) {
					// a server of a cluster went (or moved us): the seat
					// waits at another
					c.wsMu.Lock()
					at := c.url
					c.wsMu.Unlock()
					rerr := c.resume(at)
					if rerr == nil {
						last = nil
						continue
					}
					err = fmt.Errorf("%w (after %v)", rerr, err)
				} else if last != nil && last.Code != CodeRankAbsent {
					err = &RemoteError{Code: last.Code, Message: last.Message}
				}
			}
			c.setErr(err)
			_ = ws.closeNow()
			return
		}
		if e, ok := m.(*Error); ok {
			last = e
		}
		select {
		case c.in <- m:
		case <-c.done:
			c.setErr(ErrClosed)
			return
		}
	}
}

// errMoved is the end of a connection whose server moved the rank.
var errMoved = errors.New("server moved the rank to another (drain)")

func (c *Client) setErr(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// Welcome returns the server's answer to the join.
func (c *Client) Welcome() Welcome { return c.welcome }

// URL is the endpoint of the server the client is connected through.
func (c *Client) URL() string {
	c.wsMu.Lock()
	defer c.wsMu.Unlock()
	return c.url
}

// Rank is this client's rank.
func (c *Client) Rank() int { return c.welcome.Rank }

// Kind is the kind this client joined as (DialOptions.Kind, or the
// build's default).
func (c *Client) Kind() ClientKind { return c.join.Kind }

// Size is the job's size: the ranks of its original world, 0…Size-1.
func (c *Client) Size() int { return c.welcome.Size }

// Max is the most ranks the job can hold: its Max if it may grow past
// Size (late ranks Size…Max-1 join it once it formed), else Size. Tables
// indexed by rank need Max entries.
func (c *Client) Max() int { return c.welcome.Limit() }

// Late reports whether this rank joined the job after it formed: its
// rank is in [Size, Max), outside the original world.
func (c *Client) Late() bool { return c.welcome.Late }

// Messages delivers incoming messages (*Ready, *Joined, *Signal, *Left,
// *Name, *Error, *Pong) in order. It is closed when the connection ends; Err then says why.
func (c *Client) Messages() <-chan Message { return c.in }

// Err is why Messages was closed: a *RemoteError if the server closed the
// connection after an error message (one matching ErrDeclaredFailed when
// the server declared this rank failed and evicted it), ErrClosed after
// Close, else the transport error. It is nil while the connection is up.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Signal sends an SDP offer/answer or ICE candidate to rank to. payload must
// be a JSON value other than null (for instance an SDP through EncodeString,
// or a marshalled RTCIceCandidateInit).
func (c *Client) Signal(ctx context.Context, to int, kind SignalKind, payload []byte) error {
	return c.Send(ctx, &Signal{To: to, From: c.welcome.Rank, Kind: kind, Payload: payload})
}

// Send sends any message. Servers accept only Signal, Path, Abort,
// Suspect, Leaving, Publish, Unpublish, Lookup, Telemetry, Ping and Pong
// after the join. When the server told its rate limit, Send waits as long as it
// takes to stay inside it (senders queue in order).
func (c *Client) Send(ctx context.Context, m Message) error {
	data, err := Encode(m)
	if err != nil {
		return err
	}
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	if err := c.waitPace(ctx); err != nil {
		return err
	}
	for {
		ws, moved := c.transport()
		err := ws.write(ctx, data)
		if err == nil {
			c.sentAt.Store(time.Now().UnixNano())
		}
		if err == nil || c.welcome.Resume == "" {
			return err
		}
		// its server is gone: the reader takes the seat back through
		// another, then the message goes there
		select {
		case <-moved:
		case <-c.readEnd:
			if e := c.Err(); e != nil {
				return e
			}
			return err
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-c.done:
			return ErrClosed
		}
	}
}

// waitPace waits until sending one more message keeps the client inside
// the server's rate limit.
func (c *Client) waitPace(ctx context.Context) error {
	if c.pace == nil {
		return nil
	}
	c.paceMu.Lock()
	defer c.paceMu.Unlock()
	for {
		wait := c.pace.take(time.Now())
		if wait == 0 {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-c.done:
			t.Stop()
			return ErrClosed
		}
	}
}

// Close leaves the job and waits for the reader goroutine to end.
func (c *Client) Close() error {
	err := ErrClosed
	c.closeOnce.Do(func() {
		close(c.done)
		ws, _ := c.transport()
		err = ws.close()
		<-c.readEnd
		if errors.Is(err, context.Canceled) {
			err = nil
		}
	})
	return err
}
