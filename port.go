package meshmpi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/meshmpi/meshmpi/peer"
)

// Ports, Accept and Connect (MPI-4.1 §11.8): how ranks that join a
// running job become part of it. A rank opens a port (OpenPort) and
// publishes its name as a service through the job's signaling server
// (PublishName); a rank that joins later — a late rank, whose world is
// itself alone (Comm.Late) — looks the name up (LookupName) and connects
// (Connect), while the job's ranks accept (Accept): both get an
// intercommunicator, which IntercommMerge makes one communicator.
//
// A port is a rank of the job and a number: "meshmpi-port:3:1" is port 1
// of job rank 3. The connecting group's leader sends that rank a request
// naming the port and a reply tag, on a matching context every process
// has (portContext); the rank's port listener queues it for the port's
// Accept, or refuses it at once when the port is not open. The two
// leaders then swap their groups as IntercommCreate's leaders do, on the
// reply tag, and agree on a context id free in both groups.

// portContext is the matching context of port requests and of the
// leaders' exchanges that follow: a spare kind of the world's id, which
// every process holds (a late rank's own world has that id too).
const portContext = uint32(worldContext)<<ctxShift | 5

// Port protocol limits.
const (
	portPrefix  = "meshmpi-port:"
	portReqLen  = 8  // a request: the port's id, the reply tag
	portBacklog = 64 // connect requests queued at one port; more are refused
	// maxNameLen bounds a service name or a port name (the signaling
	// server's limit).
	maxNameLen = 256
	// nameTimeout bounds a publish or unpublish, which the server answers
	// at once.
	nameTimeout = 30 * time.Second
)

// nameService is where a process publishes and looks up port names: its
// job's signaling server, through the mesh or a WASI host, or an
// in-process world's table (localNames). Its errors wrap ErrService
// (publish of a published service, unpublish of an unknown one) and
// ErrName.
type nameService interface {
	Publish(ctx context.Context, service, port string) error
	Unpublish(ctx context.Context, service string) error
	Lookup(ctx context.Context, service string) (string, error)
}

// ports are a process's open ports and the listener that takes connect
// requests for them.
type ports struct {
	mu        sync.Mutex
	next      uint32
	open      map[uint32]*port
	listening bool
	stopped   error // the endpoint closed: no port takes requests
	req       [portReqLen]byte
	tags      atomic.Uint32 // the reply tags of this process's connects
	// posting is listenPort's state: 0 idle, 1 posting the receive,
	// 2 posting and the receive completed (a request was waiting): the
	// poster then posts again instead of the completion recursing
	posting atomic.Int32
	// refusing counts refusals being sent; past maxRefusals a refusal
	// is dropped (only a flood of connects to closed ports gets there)
	refusing atomic.Int32
}

// port is one open port: the connect requests waiting for an Accept.
type port struct {
	reqs   chan connectRequest // cap portBacklog
	closed chan struct{}
}

type connectRequest struct {
	from int // job rank of the connecting leader
	tag  int // its reply tag
}

// portListener takes a process's port requests (peer.SourceCompleter).
type portListener proc

// listenPorts starts the process's port listener, if it has none.
func (p *proc) listenPorts() {
	p.ports.mu.Lock()
	defer p.ports.mu.Unlock()
	if p.ports.listening || p.ports.stopped != nil {
		return
	}
	p.ports.listening = true
	p.ports.mu.Unlock()
	p.listenPort()
	p.ports.mu.Lock()
}

// listenPort posts the listener's receive, without ports.mu held. A
// request waiting already completes it at once, on this goroutine
// (CompleteFrom), which then leaves the next post to this loop: a burst
// of queued requests does not nest one call per request.
func (p *proc) listenPort() {
	for {
		p.ports.posting.Store(1)
		_ = p.ep.RecvNotify(peer.AnySource, portContext, 0, -1, p.ports.req[:], (*portListener)(p), 0)
		if p.ports.posting.CompareAndSwap(1, 0) {
			return // posted, not completed yet: a later completion posts again
		}
	}
}

// relisten posts the listener's receive again after a completion: the
// poster's loop does, if the completion came inside its post.
func (p *proc) relisten() {
	if !p.ports.posting.CompareAndSwap(1, 2) {
		p.listenPort()
	}
}

// Complete implements peer.Completer; CompleteFrom is called instead.
func (l *portListener) Complete(id int32, n int, err error) { l.CompleteFrom(id, -1, n, err) }

// CompleteFrom takes one request: queued for its port's Accept, or
// refused. A request of the wrong size is dropped (no honest rank sends
// one).
func (l *portListener) CompleteFrom(_ int32, source, n int, err error) {
	p := (*proc)(l)
	pt := &p.ports
	if err != nil && !errors.Is(err, ErrTruncate) {
		// the endpoint closed: every Accept waiting on a port fails
		pt.mu.Lock()
		pt.stopped = err
		for id, o := range pt.open {
			close(o.closed)
			delete(pt.open, id)
		}
		pt.mu.Unlock()
		return
	}
	id, tag := binary.LittleEndian.Uint32(pt.req[:]), int(binary.LittleEndian.Uint32(pt.req[4:]))
	valid := err == nil && n == portReqLen && source >= 0 && tag > 0 && tag <= TagUB
	pt.mu.Lock()
	o := pt.open[id]
	queued := false
	if valid && o != nil {
		select {
		case o.reqs <- connectRequest{from: source, tag: tag}:
			queued = true
		default:
		}
	}
	pt.mu.Unlock()
	if valid && !queued && pt.refusing.Add(1) <= maxRefusals {
		why := fmt.Sprintf("port %d of job rank %d is not open", id, p.ep.Rank())
		if o != nil {
			why = fmt.Sprintf("port %d of job rank %d has %d connects waiting already", id, p.ep.Rank(), portBacklog)
		}
		go p.refuse(source, tag, why)
	} else if valid && !queued {
		pt.refusing.Add(-1)
	}
	p.relisten()
}

// maxRefusals bounds the refusals a process sends at once, each on its
// own goroutine (the listener runs on the completing goroutine, which a
// send must not block).
const maxRefusals = 64

// refuse tells a connecting leader that its request failed.
func (p *proc) refuse(to, tag int, why string) {
	defer p.ports.refusing.Add(-1)
	msg := append([]byte{byte(errClass(ErrPort) + 1)}, why...)
	q := p2pRequest{c: p.world, kind: p2pSend, rank: 0, world: to, tag: tag, ctx: portContext, buf: msg, elem: 1}
	_, _ = q.run() // a leader that is gone needs no answer
}

// OpenPort opens a port on which this process accepts connections
// (MPI_Open_port) and returns its name, for Accept at this process and for
// Connect anywhere in the job (through PublishName and LookupName, or any
// other way). c is any communicator of the process; the port belongs to
// the process.
func (c *Comm) OpenPort() (string, error) {
	if err := c.check(); err != nil {
		return "", fmt.Errorf("open port: %w", err)
	}
	p := c.p
	p.listenPorts()
	pt := &p.ports
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.stopped != nil {
		return "", fmt.Errorf("open port: %w", pt.stopped)
	}
	if pt.open == nil {
		pt.open = map[uint32]*port{}
	}
	pt.next++
	pt.open[pt.next] = &port{reqs: make(chan connectRequest, portBacklog), closed: make(chan struct{})}
	return portPrefix + strconv.Itoa(p.ep.Rank()) + ":" + strconv.FormatUint(uint64(pt.next), 10), nil
}

// ClosePort closes a port OpenPort opened (MPI_Close_port): an Accept
// waiting on it fails with ErrPort, and so do the connects waiting for one.
func (c *Comm) ClosePort(port string) error {
	if err := c.check(); err != nil {
		return fmt.Errorf("close port: %w", err)
	}
	rank, id, err := parsePort(port, c.p.ep.Size())
	if err != nil {
		return fmt.Errorf("close port: %w", err)
	}
	pt := &c.p.ports
	pt.mu.Lock()
	o := pt.open[id]
	if rank != c.p.ep.Rank() || o == nil {
		pt.mu.Unlock()
		return fmt.Errorf("close port %q: not open at this process: %w", port, ErrPort)
	}
	delete(pt.open, id)
	close(o.closed)
	pt.mu.Unlock()
	for {
		select {
		case r := <-o.reqs:
			c.p.ports.refusing.Add(1) // refuse counts itself out
			c.p.refuse(r.from, r.tag, fmt.Sprintf("port %q was closed", port))
		default:
			return nil
		}
	}
}

// parsePort reads a port name: the job rank that opened it and its id.
func parsePort(name string, size int) (rank int, id uint32, err error) {
	rest, ok := strings.CutPrefix(name, portPrefix)
	r, i, ok2 := strings.Cut(rest, ":")
	if ok && ok2 {
		var n uint64
		rank, err = strconv.Atoi(r)
		if err == nil {
			n, err = strconv.ParseUint(i, 10, 32)
		}
		if err == nil && rank >= 0 && rank < size && n > 0 {
			return rank, uint32(n), nil
		}
	}
	return 0, 0, fmt.Errorf("port name %q: want %sRANK:ID with RANK a rank of the job: %w", clipName(name), portPrefix, ErrPort)
}

func clipName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Accept accepts a connection on port from a group that calls Connect
// (MPI_Comm_accept) and returns the intercommunicator between c's group
// and that one. Every rank of c calls it; port is used at root only, and
// must be open at root's process. It waits until a group connects.
func (c *Comm) Accept(port string, root int) (*Comm, error) {
	x := &portCross{name: port}
	return c.joinGroups("accept", root, x, x.awaitConnect, x.swap)
}

// Connect connects c's group to the group that accepts on port
// (MPI_Comm_connect) and returns the intercommunicator between them.
// Every rank of c calls it; port is used at root only. It waits until the
// other group accepts; a port that is not open fails with ErrPort, one
// whose process failed with ErrProcFailed.
func (c *Comm) Connect(port string, root int) (*Comm, error) {
	x := &portCross{name: port}
	return c.joinGroups("connect", root, x, x.awaitAccept, x.connect)
}

// joinGroups is Accept and Connect: an intercommunicator construction
// whose leaders meet through a port. They meet (meet, at root) before
// the construction's context-id agreement, whose rounds hold the
// process's mask of used ids (agreeContext): an Accept waits for a
// connection, a Connect for its acceptance, as long as they take, and
// the process's other constructions must not wait for them.
func (c *Comm) joinGroups(verb string, root int, x *portCross, meet func() error, cross func([]byte, error) ([]byte, error)) (*Comm, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", verb, err)
	}
	if c.inter != nil {
		return nil, fmt.Errorf("%s on %s: an intercommunicator: %w", verb, c, ErrComm)
	}
	if root < 0 || root >= len(c.ranks) {
		return nil, fmt.Errorf("%s on %s: root %d: %w", verb, c, root, ErrRoot)
	}
	if err := c.revokedErr(); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", verb, c, err)
	}
	x.local = c
	x.peer = -1
	var met error
	if c.rank == root {
		met = meet()
	}
	if err := leaderWord(c, root, met); err != nil {
		if c.rank == root && met == nil {
			// the other leader, met, waits for this one's first round
			_, _ = cross(encodeGroup(c.ranks, make([]byte, agreeMaskLen*len(c.ranks))), err)
		}
		return nil, fmt.Errorf("%s on %s: %w", verb, c, err)
	}
	var remote []int
	id, _, _, lent, err := agreeContext(c, leaderRound(c, root, &remote, cross), nil)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", verb, c, err)
	}
	return newIntercomm(c, id, remote, lent), nil
}

// portCross is a leader's side of Accept or Connect: the leaders meet
// through the port, then every round of the construction swaps the
// groups.
type portCross struct {
	local *Comm
	name  string
	peer  int // the other leader's job rank, -1 until found
	tag   int // the connecting leader's reply tag: both directions use it
	// swapping: a connecting leader's first round is done, and so are
	// its special ways
	swapping bool
}

// awaitConnect waits for a connect request on the port and tells the
// connecting leader it was accepted; the rounds then swap.
func (x *portCross) awaitConnect() error {
	p := x.local.p
	rank, id, err := parsePort(x.name, p.ep.Size())
	if err != nil {
		return err
	}
	p.ports.mu.Lock()
	o, stopped := p.ports.open[id], p.ports.stopped
	p.ports.mu.Unlock()
	switch {
	case stopped != nil:
		return stopped
	case rank != p.ep.Rank() || o == nil:
		return fmt.Errorf("port %q is not open at this process: %w", x.name, ErrPort)
	}
	p.park(blockedIn{call: "Accept(" + x.name + ")", comm: x.local, peer: AnySource})
	var r connectRequest
	select {
	case r = <-o.reqs:
	case <-o.closed:
	case <-x.local.revokedC:
	}
	p.unpark()
	if err := x.local.revokedErr(); err != nil && r.tag == 0 {
		return err
	}
	if r.tag == 0 {
		p.ports.mu.Lock()
		stopped := p.ports.stopped
		p.ports.mu.Unlock()
		if stopped != nil {
			return stopped
		}
		return fmt.Errorf("port %q was closed: %w", x.name, ErrPort)
	}
	x.peer, x.tag = r.from, r.tag
	q := p2pRequest{c: x.local, kind: p2pSend, world: x.peer, tag: x.tag, ctx: portContext, buf: []byte{0}, elem: 1}
	_, err = q.run()
	return err
}

// awaitAccept sends the port's process a connect request and waits until
// an Accept takes it, or the port's process refuses it.
func (x *portCross) awaitAccept() error {
	c := x.local
	p := c.p
	rank, id, err := parsePort(x.name, p.ep.Size())
	if err != nil {
		return err
	}
	if c.local[rank] >= 0 {
		return fmt.Errorf("port %q belongs to a rank of %s: %w", x.name, c, ErrPort)
	}
	x.peer, x.tag = rank, int(p.ports.tags.Add(1)%TagUB)+1
	in := make([]byte, 1+2*maxNameLen) // the word: accepted, or why not
	r := p2pRequest{c: c, kind: p2pRecv, world: rank, tag: x.tag, ctx: portContext, buf: in, elem: 1}
	if err := r.start(); err != nil {
		return err
	}
	var req [portReqLen]byte
	binary.LittleEndian.PutUint32(req[:], id)
	binary.LittleEndian.PutUint32(req[4:], uint32(x.tag))
	s := p2pRequest{c: c, kind: p2pSend, world: rank, tag: 0, ctx: portContext, buf: req[:], elem: 1}
	_, serr := s.run()
	p.await(r.op, blockedIn{call: "Connect(" + x.name + ")", comm: c, peer: AnySource})
	st, rerr := r.result(false)
	switch {
	case serr != nil:
		return serr
	case rerr != nil:
		return rerr
	case st.Bytes < 1:
		return fmt.Errorf("empty answer from job rank %d: %w", rank, ErrArg)
	case in[0] != 0:
		return fmt.Errorf("job rank %d: %s: %w", rank, clipName(string(in[1:st.Bytes])), errClasses[min(int(in[0])-1, len(errClasses)-1)])
	}
	return nil
}

// connect is a connecting leader's round: the first takes the accepting
// leader's group and sends this group's back (or this leader's word that
// it cannot go on); later rounds swap.
func (x *portCross) connect(out []byte, failed error) ([]byte, error) {
	if x.swapping {
		return x.swap(out, failed)
	}
	x.swapping = true
	c := x.local
	in := x.inBuf(out)
	r := p2pRequest{c: c, kind: p2pRecv, world: x.peer, tag: x.tag, ctx: portContext, buf: in, elem: 1}
	if err := r.start(); err != nil {
		return nil, err
	}
	c.p.await(r.op, blockedIn{call: "Connect(" + x.name + ")", comm: c, peer: x.peer})
	st, err := r.result(false)
	if err != nil {
		return nil, err
	}
	theirs, bad := x.check(in[:st.Bytes], out)
	if bad == nil {
		bad = failed
	}
	// the accepting leader waits for this group, or for this leader's
	// word that it cannot go on
	msg := append([]byte{0}, out...)
	if bad != nil {
		msg = append([]byte{byte(errClass(bad) + 1)}, bad.Error()...)
	}
	// (even after its word that it cannot go on: it exchanges, and waits)
	q := p2pRequest{c: c, kind: p2pSend, world: x.peer, tag: x.tag, ctx: portContext, buf: msg, elem: 1}
	if _, err := q.run(); err != nil && bad == nil {
		return nil, err
	}
	return theirs, bad
}

// swap sends this group's record to the other leader and takes its.
// With failed, it sends why this leader cannot go on instead.
func (x *portCross) swap(out []byte, failed error) ([]byte, error) {
	in := x.inBuf(out)
	msg := append([]byte{0}, out...)
	if failed != nil {
		msg = append([]byte{byte(errClass(failed) + 1)}, failed.Error()...)
	}
	st, err := exchange(x.local, x.peer, portContext, x.tag, x.tag, msg, in)
	if err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, failed
	}
	return x.check(in[:st.Bytes], out)
}

// inBuf is a buffer for the other leader's message: at most every rank of
// the job and its record.
func (x *portCross) inBuf(out []byte) []byte {
	n := len(x.local.ranks)
	recLen := (len(out) - 4 - 4*n) / n
	return make([]byte, 1+4+x.local.p.ep.Size()*(4+recLen))
}

// check reads the other leader's message: its group record, or why it
// cannot go on.
func (x *portCross) check(in, out []byte) ([]byte, error) {
	if len(in) < 1 {
		return nil, fmt.Errorf("empty message from the other leader (job rank %d): %w", x.peer, ErrArg)
	}
	if in[0] != 0 {
		return nil, fmt.Errorf("job rank %d: %s: %w", x.peer, clipName(string(in[1:])), errClasses[min(int(in[0])-1, len(errClasses)-1)])
	}
	n := len(x.local.ranks)
	return in[1:], disjoint(x.local, in[1:], (len(out)-4-4*n)/n)
}

// PublishName publishes port as service's name for the ranks of the job
// (MPI_Publish_name), through its signaling server: a rank that joins
// later finds the port with LookupName. A service published already
// fails with ErrService. The name goes when the publishing process leaves
// the job. c is any communicator of the process.
func (c *Comm) PublishName(service, port string) error {
	ns, err := c.names("publish name", service)
	if err != nil {
		return err
	}
	if _, _, err := parsePort(port, c.p.ep.Size()); err != nil {
		return fmt.Errorf("publish name %q: %w", service, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), nameTimeout)
	defer cancel()
	if err := ns.Publish(ctx, service, port); err != nil {
		return fmt.Errorf("publish name %q: %w", service, err)
	}
	return nil
}

// UnpublishName removes the name PublishName gave service
// (MPI_Unpublish_name); one not published fails with ErrService.
func (c *Comm) UnpublishName(service, port string) error {
	ns, err := c.names("unpublish name", service)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), nameTimeout)
	defer cancel()
	if err := ns.Unpublish(ctx, service); err != nil {
		return fmt.Errorf("unpublish name %q: %w", service, err)
	}
	return nil
}

// LookupName returns the port published as service (MPI_Lookup_name),
// waiting until a process of the job publishes it or ctx ends (a joining
// rank may be quicker than the job's publisher).
func (c *Comm) LookupName(ctx context.Context, service string) (string, error) {
	ns, err := c.names("lookup name", service)
	if err != nil {
		return "", err
	}
	port, err := ns.Lookup(ctx, service)
	if err != nil {
		return "", fmt.Errorf("lookup name %q: %w", service, err)
	}
	return port, nil
}

// names checks a service name and returns the process's name service.
func (c *Comm) names(verb, service string) (nameService, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", verb, err)
	}
	if service == "" || len(service) > maxNameLen || !utf8.ValidString(service) {
		return nil, fmt.Errorf("%s %q: want 1 … %d bytes of UTF-8: %w", verb, clipName(service), maxNameLen, ErrName)
	}
	if c.p.names == nil {
		return nil, fmt.Errorf("%s %q: this world has no name service: %w", verb, service, ErrNotSupported)
	}
	return c.p.names, nil
}

// localNames is the name service of an in-process world (Run): a table
// its ranks share.
type localNames struct {
	mu      sync.Mutex
	names   map[string]string
	changed chan struct{} // closed and replaced when a name is published
}

func newLocalNames() *localNames {
	return &localNames{names: map[string]string{}, changed: make(chan struct{})}
}

func (l *localNames) Publish(_ context.Context, service, port string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.names[service]; ok {
		return fmt.Errorf("published already: %w", ErrService)
	}
	l.names[service] = port
	close(l.changed)
	l.changed = make(chan struct{})
	return nil
}

func (l *localNames) Unpublish(_ context.Context, service string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.names[service]; !ok {
		return fmt.Errorf("not published: %w", ErrService)
	}
	delete(l.names, service)
	return nil
}

func (l *localNames) Lookup(ctx context.Context, service string) (string, error) {
	for {
		l.mu.Lock()
		port, ok := l.names[service]
		changed := l.changed
		l.mu.Unlock()
		if ok {
			return port, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", fmt.Errorf("not published: %w: %w", ErrName, context.Cause(ctx))
		}
	}
}

// Late reports whether this process joined its job after the job formed
// (a late rank, admitted by a job that may grow): its world is itself
// alone, and it becomes part of the job by connecting to a port the job
// published (LookupName, Connect, IntercommMerge).
func (c *Comm) Late() bool { return c != nil && c.p.late }

// Disconnect waits until every rank of c has called it, then frees c
// (MPI_Comm_disconnect). Ranks that joined through Connect and the ranks
// that accepted them disconnect the communicators they share before they
// finalize: each then has everything the other sent it, and finalizing
// closes no link the other still uses. On an intracommunicator it is the
// agreement-based barrier Finalize uses, so ranks that failed do not hang
// it.
func (c *Comm) Disconnect() error {
	if err := c.check(); err != nil {
		return fmt.Errorf("disconnect: %w", err)
	}
	if c.id == worldContext || c.id == selfContext {
		return fmt.Errorf("disconnect %s: a predefined communicator cannot be disconnected: %w", c, ErrComm)
	}
	var err error
	if c.inter == nil {
		_, _, err = c.agreeOn([]byte{0}, "Disconnect", true)
	} else {
		err = Barrier(c)
	}
	if ferr := c.Free(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("disconnect: %w", err)
	}
	return nil
}

// Self returns the communicator of the calling process alone
// (MPI_COMM_SELF): a rank accepts connections on it without involving
// the other ranks of its world, as a manager that admits workers one by
// one does. It cannot be freed.
func (c *Comm) Self() *Comm {
	if c == nil {
		return nil
	}
	p := c.p
	p.selfOnce.Do(func() {
		p.self = newComm(p, selfContext, []int{p.ep.Rank()}, selfNonce)
		p.self.name = "self"
	})
	return p.self
}

// selfNonce names every self communicator.
const selfNonce = 2
