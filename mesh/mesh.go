package mesh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// Net is how a job's ranks reach each other: the ICE servers from the
// welcome, and whether every rank is on this host (the job's "net"
// setting is "loopback").
type Net struct {
	ICEServers []signaling.ICEServer
	Loopback   bool
	// Identity is this rank's certificate, whose fingerprint it announced
	// when it joined; nil: a fresh certificate per link.
	Identity *peer.Identity
	// Aborted, if set, is told when a rank of the job called Abort: the
	// job is over (the rank is also reported to the endpoint as lost).
	Aborted func(rank, code int, reason string)
	// Evicted, if set, is told when the server declared this rank failed
	// and closed its signaling connection (a peer lost its link to it, or
	// it stopped answering pings: it was frozen, or cut off): the job goes
	// on without it, for good; or when the job ended under it (the
	// server's EndJob: the organizer ended it, or its time limit passed).
	// It is told before the endpoint closes with err (an endpoint without
	// Close(error) has every peer reported lost with it), so that a
	// process ending here says why before a failed operation returns to
	// its program; err wraps signaling.ErrDeclaredFailed or
	// signaling.ErrJobGone, and peer.ErrProcFailed, and says why.
	// It is called once, on the mesh's goroutine: it must not call Close.
	Evicted func(err error)

	// maxFrame caps the frames this rank's WebRTC links accept (New
	// sets it: a WASI host's guest takes at most wasiFrame); 0: peer's
	// MaxWebRTCFrame.
	maxFrame int
}

// abortNotice bounds how long Abort waits to tell the server.
const abortNotice = 2 * time.Second

// Endpoint is what the mesh hands its connections and losses to: a
// *peer.Endpoint, or a WASI host that relays them to its guest rank.
type Endpoint interface {
	// Attach takes the link to rank once it is connected.
	Attach(rank int, l peer.Link) error
	// FailPeer is told when rank leaves the job: pending operations with
	// it fail with err (which wraps peer.ErrProcFailed).
	FailPeer(rank int, err error)
}

// endpointCloser is an Endpoint that can be closed with a cause
// (*peer.Endpoint; a WASI host's relay, which tells its guest): an
// evicted rank's is, so that every operation fails, receives from any
// source included, and the rank does not go on as a job of one.
type endpointCloser interface {
	Close(err error)
}

// failureSource is an Endpoint that tells of the peers it lost by itself
// (*peer.Endpoint): the mesh reports them to the server (Suspect).
type failureSource interface {
	OnPeerFailed(func(rank int, err error))
}

// maxPairSignals bounds the set-up messages queued for one connection; a
// remote that sends more is broken.
const maxPairSignals = 256

// Mesh connects this rank to the others on demand (it is the endpoint's
// peer.Dialer) through the signaling client, and routes what the server sends:
// set-up signals to the connection they belong to, departures to the
// endpoint as lost peers.
//
// Each pair has exactly one offerer, the lower rank, so two ranks that
// start talking at once never build two connections (no glare): a higher
// rank that wants a link sends the lower one a connect request and answers
// the offer that follows. A pair's signaling outlives the connect: the
// link trickles late candidates and restarts ICE through it when its path
// breaks (a connect request for a linked pair asks for that restart).
type Mesh struct {
	client *signaling.Client
	net    Net
	rank   int
	size   int // the job's limit: ranks 0…size-1, late ranks included (Welcome.Limit)
	ep     Endpoint

	ctx    context.Context // ends at close: pending connects give up
	cancel context.CancelFunc
	wg     sync.WaitGroup // router and connect goroutines

	ready     chan struct{} // closed when the server said all ranks are present
	readyOnce sync.Once

	down chan struct{} // closed when the signaling connection ends

	// print is this rank's certificate fingerprint, "" without one;
	// forceWebRTC is the job's link=webrtc (SettingLink)
	print       string
	forceWebRTC bool

	mu     sync.Mutex
	prints []string // the certificate the server vouched for, per rank (Ready, Joined)
	// hosts and kinds are what each rank announced (Ready, Joined): ranks
	// of one host link without WebRTC (choose)
	hosts   []string
	kinds   []signaling.ClientKind
	names   []*nameWait
	parked  map[string]bool // services with a lookup waiting at the server
	pairs   map[int]*pair
	gone    error // why the signaling connection ended; nil while it is up
	stopped bool
	// known[r] says the job knows rank r is gone: the server announced
	// it, or this rank reported it (Suspect); reports waits for the
	// reporter.
	known    []bool
	departed []bool // the server announced the rank's departure
	reports  []*signaling.Suspect
	report   chan struct{} // cap 1: reports grew
	tel      *reporter     // the telemetry reporter, if started (telemetry.go)
	// opened holds the links this rank opened or accepted, by rank,
	// while a telemetry reporter runs, until it has reported them closed
	// (a departed rank's pair goes at once)
	opened []peer.Link
}

// pair is this rank's connection to one remote rank while it is set up,
// and the result afterwards.
type pair struct {
	m      *Mesh
	remote int

	mu     sync.Mutex
	queue  []pairSignal
	dead   error
	notify chan struct{} // cap 1: queue or dead changed

	local chan peer.Link // cap 1: the memory link the lower rank hands over (connectMemory)

	done chan struct{} // closed when link or err is set
	link peer.Link
	err  error
}

type pairSignal struct {
	kind    string // peer.Signal*
	payload []byte
}

// New makes the mesh of the rank c joined as, routing c's messages once
// Start is called. The mesh owns c from now on: Close closes it.
func New(c *signaling.Client, net Net) *Mesh {
	m := &Mesh{client: c, net: net, rank: c.Rank(), size: c.Max(),
		ready: make(chan struct{}), down: make(chan struct{}), pairs: map[int]*pair{},
		prints: make([]string, c.Max()), known: make([]bool, c.Max()), departed: make([]bool, c.Max()),
		hosts: make([]string, c.Max()), kinds: make([]signaling.ClientKind, c.Max()),
		report: make(chan struct{}, 1), forceWebRTC: c.Welcome().Settings[SettingLink] == "webrtc"}
	if net.Identity != nil {
		m.print = net.Identity.Fingerprint()
	}
	if c.Kind() == signaling.KindWASI {
		// a WASI host relays every frame a remote sends to its guest
		// whole: remotes must send frames the guest takes
		m.net.maxFrame = wasiFrame
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.register()
	return m
}

// Start begins routing the server's messages; ranks that leave are
// reported to ep. An ep that tells of the peers it lost by itself, as
// *peer.Endpoint does (OnPeerFailed), has them reported to the server
// (Suspect).
func (m *Mesh) Start(ep Endpoint) {
	m.ep = ep
	if fs, ok := ep.(failureSource); ok {
		fs.OnPeerFailed(m.Suspect)
	}
	m.wg.Add(2)
	go m.route()
	go m.reporter()
}

// Suspect tells the server that this rank lost its link to rank (it
// closed, ICE did not reconnect, SCTP aborted; err says how), so that the
// whole job learns of the failure, including ranks with no link to it and
// while the server still sees the rank connected (frozen, or cut off from
// this rank only): the server declares it failed (see the signaling
// package's Failure knowledge). A rank the server already announced as
// gone, or already reported, is not reported again; nor is anything once
// the mesh is closed or its signaling connection is gone. Suspect never
// blocks: a goroutine of the mesh sends the report. The mesh's endpoint
// calls it (OnPeerFailed); a WASI host calls it for the links it relays.
func (m *Mesh) Suspect(rank int, err error) {
	if rank < 0 || rank >= m.size || rank == m.rank {
		return
	}
	m.mu.Lock()
	if m.known[rank] || m.stopped || m.gone != nil {
		m.mu.Unlock()
		return
	}
	m.known[rank] = true
	why := ""
	if err != nil {
		why = clip(err.Error(), signaling.MaxTextLen)
	}
	m.reports = append(m.reports, &signaling.Suspect{Rank: rank, Reason: why})
	m.mu.Unlock()
	select {
	case m.report <- struct{}{}:
	default:
	}
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// reporter sends the Suspect reports until the mesh closes. A report that
// cannot be sent is lost with the signaling connection, which the server
// sees end.
func (m *Mesh) reporter() {
	defer m.wg.Done()
	for {
		select {
		case <-m.report:
		case <-m.ctx.Done():
			return
		}
		m.mu.Lock()
		reports := m.reports
		m.reports = nil
		m.mu.Unlock()
		for _, r := range reports {
			if err := m.client.Send(m.ctx, r); err != nil {
				break
			}
		}
	}
}

// WaitReady returns once every rank of the job has joined. It fails, with
// peer.ErrProcFailed, when the signaling connection ends first: the server
// failed the job because a rank left before it formed (the error wraps
// signaling.ErrJobGone), or the server is gone.
func (m *Mesh) WaitReady(ctx context.Context) error {
	select {
	case <-m.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the job's ranks: %w", context.Cause(ctx))
	case <-m.ctx.Done():
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.gone == nil { // Close, not the server
			return fmt.Errorf("the job did not form: %w: mesh closed", peer.ErrProcFailed)
		}
		return fmt.Errorf("the job did not form: %w: %w", peer.ErrProcFailed, m.gone)
	}
}

// Dial implements peer.Dialer.
func (m *Mesh) Dial(ctx context.Context, rank int) (peer.Link, error) {
	p := m.pair(rank, true)
	select {
	case <-p.done:
		return p.link, p.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// pair returns the pair of remote, starting its connection if it has
// none; initiate says this rank wants to talk (rather than answering the
// remote's request or offer).
func (m *Mesh) pair(remote int, initiate bool) *pair {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.pairs[remote]; p != nil {
		return p
	}
	p := &pair{m: m, remote: remote, notify: make(chan struct{}, 1), done: make(chan struct{}), local: make(chan peer.Link, 1)}
	if m.departed[remote] {
		// gone for good: no pair is kept for it (see left)
		p.err = fmt.Errorf("connect to rank %d: %w: it left the job", remote, peer.ErrProcFailed)
		close(p.done)
		return p
	}
	m.pairs[remote] = p
	if m.stopped || m.gone != nil {
		p.err = fmt.Errorf("connect to rank %d: %w: signaling is closed", remote, peer.ErrProcFailed)
		close(p.done)
		return p
	}
	m.wg.Add(1)
	go p.connect(initiate)
	return p
}

func (p *pair) connect(initiate bool) {
	m := p.m
	defer m.wg.Done()
	var (
		l   peer.Link
		err error
	)
	vouched := m.vouched(p.remote)
	if m.rank < p.remote {
		// the lower rank picks the kind of link; the higher one follows
		// what it does (answer)
		switch kind, r := m.choose(p.remote); kind {
		case linkMemory:
			l, err = p.connectMemory(r)
		case linkHost:
			l, err = p.connectHost(true)
			if errors.Is(err, errHostFallback) {
				// no same-host link for this pair after all: the higher
				// rank follows a WebRTC offer as it would a first move
				l, err = connectLink(m.ctx, m.net, vouched, p, true, m.nativeRemote(p.remote))
			}
		default:
			l, err = connectLink(m.ctx, m.net, vouched, p, true, m.nativeRemote(p.remote))
		}
	} else {
		if initiate {
			if r := m.registered(p.remote); r != nil && !m.forceWebRTC {
				r.pair(m.rank, false) // in this process: ask it directly
			} else {
				err = m.client.Signal(m.ctx, p.remote, signaling.SignalConnect, []byte("{}"))
			}
		}
		if err == nil {
			l, err = p.answer(vouched)
		}
	}
	if err == nil {
		// telemetry learns of the link before it carries anything: a
		// rank that uses it and leaves at once still reports it
		m.setOpened(p.remote, l)
		if err = m.ep.Attach(p.remote, l); err != nil {
			m.setOpened(p.remote, nil)
			l.Close()
		}
	}
	if err == nil {
		m.reportPath(p.remote, l)
	}
	if err != nil {
		err = peer.Failure(fmt.Sprintf("connect to rank %d", p.remote), err)
		l = nil
	}
	p.link, p.err = l, err
	close(p.done)
}

// setOpened notes l as the link to remote for the telemetry reporter,
// if one runs.
func (m *Mesh) setOpened(remote int, l peer.Link) {
	m.mu.Lock()
	if m.tel != nil {
		m.opened[remote] = l
	}
	m.mu.Unlock()
}

// reportPath tells the server how the link to remote reaches it, when
// the link can say: the server's view of direct and relayed links. A
// report that cannot be sent is no loss to the job.
func (m *Mesh) reportPath(remote int, l peer.Link) {
	pr, ok := l.(peer.PathReporter)
	if !ok {
		return
	}
	path := pr.Path()
	if path.Local == "" && sameHostLink(path.Link) {
		// no ICE: the server's path view shows the link's kind
		path.Local, path.Remote = path.Link, path.Link
	}
	if path.Local == "" || path.Remote == "" {
		return
	}
	_ = m.client.Send(m.ctx, &signaling.Path{Peer: remote, Local: path.Local, Remote: path.Remote, RTTMicros: int(path.RTT.Microseconds())})
}

// vouched is the certificate fingerprint the server vouched for rank, ""
// if none (the rank announced none, or the job has not formed).
func (m *Mesh) vouched(rank int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.prints[rank]
}

// Send implements peer.Signaler.
func (p *pair) Send(ctx context.Context, kind string, payload []byte) error {
	var (
		k   signaling.SignalKind
		raw []byte
	)
	switch kind {
	case peer.SignalOffer, peer.SignalAnswer:
		k = signaling.SignalOffer
		if kind == peer.SignalAnswer {
			k = signaling.SignalAnswer
		}
		raw = signaling.EncodeString(string(payload)) // SDP text as a JSON string
	case peer.SignalCandidate:
		k, raw = signaling.SignalCandidate, payload
	case peer.SignalRestart:
		// a connect request to a rank already linked: offer again
		k, raw = signaling.SignalConnect, []byte("{}")
	case signalLink:
		k, raw = signaling.SignalLink, payload // a JSON value (link_host*.go)
	default:
		return fmt.Errorf("signal kind %q", kind)
	}
	return p.m.client.Signal(ctx, p.remote, k, raw)
}

// Recv implements peer.Signaler.
func (p *pair) Recv(ctx context.Context) (string, []byte, error) {
	for {
		p.mu.Lock()
		if len(p.queue) > 0 {
			s := p.queue[0]
			p.queue = p.queue[1:]
			p.mu.Unlock()
			return s.kind, s.payload, nil
		}
		dead := p.dead
		p.mu.Unlock()
		if dead != nil {
			return "", nil, dead
		}
		select {
		case <-p.notify:
		case <-ctx.Done():
			return "", nil, context.Cause(ctx)
		}
	}
}

// linked reports whether the pair's link is open.
func (p *pair) linked() bool {
	select {
	case <-p.done:
		return p.link != nil
	default:
		return false
	}
}

// push queues a set-up message from the remote.
func (p *pair) push(kind string, payload []byte) {
	p.mu.Lock()
	if len(p.queue) >= maxPairSignals {
		p.mu.Unlock()
		p.kill(fmt.Errorf("rank %d sent more than %d set-up messages", p.remote, maxPairSignals))
		return
	}
	p.queue = append(p.queue, pairSignal{kind, payload})
	p.mu.Unlock()
	p.poke()
}

// kill makes a connection in progress fail with err.
func (p *pair) kill(err error) {
	p.mu.Lock()
	if p.dead == nil {
		p.dead = err
	}
	p.mu.Unlock()
	p.poke()
}

func (p *pair) poke() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// existing returns remote's pair, or nil.
func (m *Mesh) existing(remote int) *pair {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pairs[remote]
}

// route handles the server's messages until the signaling connection ends.
func (m *Mesh) route() {
	defer m.wg.Done()
	for msg := range m.client.Messages() {
		switch msg := msg.(type) {
		case *signaling.Ready:
			m.mu.Lock()
			copy(m.prints, msg.Fingerprints) // a late rank's covers the ranks admitted before it
			copy(m.hosts, msg.Hosts)
			copy(m.kinds, msg.Kinds)
			m.mu.Unlock()
			m.readyOnce.Do(func() { close(m.ready) })
		case *signaling.Joined:
			if msg.Rank >= 0 && msg.Rank < m.size && msg.Rank != m.rank {
				m.mu.Lock()
				m.prints[msg.Rank], m.hosts[msg.Rank], m.kinds[msg.Rank] = msg.Fingerprint, msg.Host, msg.Kind
				m.mu.Unlock()
			}
		case *signaling.Name:
			m.named(msg)
		case *signaling.Signal:
			m.signal(msg)
		case *signaling.Left:
			m.left(msg)
		}
		// errors: rank-absent needs nothing (the connect times out or the
		// rank's departure follows); fatal ones end Messages
	}
	err := m.client.Err()
	if err == nil {
		err = signaling.ErrClosed
	}
	m.mu.Lock()
	m.gone = err
	close(m.down)
	pairs := make([]*pair, 0, len(m.pairs))
	for _, p := range m.pairs {
		pairs = append(pairs, p)
	}
	m.mu.Unlock()
	for _, p := range pairs {
		p.kill(fmt.Errorf("signaling connection lost: %w", err))
	}
	select {
	case <-m.ready:
	default:
		m.cancel() // Join is waiting: fail it
	}
	// declared failed, or the job ended under it (the organizer ended
	// it, its time limit passed): either way this rank is out of the job
	if errors.Is(err, signaling.ErrDeclaredFailed) || errors.Is(err, signaling.ErrJobGone) {
		m.evicted(err)
	}
}

// evicted ends this rank's part in the job, which the server declared it
// failed and left (err says why): its endpoint closes with err (or, for
// an endpoint that cannot be closed, every peer is lost to it), so
// nothing it waits for hangs and nothing it sends goes on without the job
// knowing. Net.Evicted is told before that.
func (m *Mesh) evicted(err error) {
	err = fmt.Errorf("rank %d was evicted from the job: %w: %w", m.rank, peer.ErrProcFailed, err)
	m.mu.Lock()
	stopped := m.stopped
	m.mu.Unlock()
	if stopped {
		return // Close came first: this rank has left already
	}
	// Net.Evicted first: a process that is this rank ends there, saying
	// why; told after the endpoint closed, it could lose the race to the
	// application, whose failed operation returns and ends the process
	// with its own words first
	if m.net.Evicted != nil {
		m.net.Evicted(err)
	}
	if c, ok := m.ep.(endpointCloser); ok {
		c.Close(err) // every operation fails, wildcard receives too
	} else {
		for r := range m.size {
			if r != m.rank {
				m.ep.FailPeer(r, err)
			}
		}
	}
}

func (m *Mesh) signal(s *signaling.Signal) {
	from := s.From
	if from < 0 || from >= m.size || from == m.rank {
		return
	}
	switch s.Kind {
	case signaling.SignalConnect:
		if m.rank < from { // only a higher rank asks this one to offer
			if p := m.existing(from); p != nil && p.linked() {
				p.push(peer.SignalRestart, nil) // its path broke: restart ICE
			} else {
				m.pair(from, false)
			}
		}
	case signaling.SignalOffer:
		if from < m.rank { // only a lower rank offers
			sdp, err := signaling.DecodeString(s.Payload)
			if err != nil {
				m.pair(from, false).kill(fmt.Errorf("rank %d sent an offer that is not an SDP string", from))
				return
			}
			m.pair(from, false).push(peer.SignalOffer, []byte(sdp))
		}
	case signaling.SignalAnswer:
		if p := m.existing(from); p != nil {
			sdp, err := signaling.DecodeString(s.Payload)
			if err != nil {
				p.kill(fmt.Errorf("rank %d sent an answer that is not an SDP string", from))
				return
			}
			p.push(peer.SignalAnswer, []byte(sdp))
		}
	case signaling.SignalCandidate:
		if p := m.existing(from); p != nil {
			p.push(peer.SignalCandidate, s.Payload)
		}
	case signaling.SignalLink:
		if from < m.rank { // the lower rank says where to reach it
			m.pair(from, false).push(signalLink, s.Payload)
		} else if p := m.existing(from); p != nil {
			p.push(signalLink, s.Payload) // the higher one refuses the offer
		}
	}
}

func (m *Mesh) left(l *signaling.Left) {
	why := "left the job"
	if l.Reason != "" {
		why += " (" + l.Reason + ")"
	}
	if l.Aborted && l.Rank != m.rank && m.net.Aborted != nil {
		m.net.Aborted(l.Rank, l.Code, l.Reason)
	}
	for _, r := range l.Ranks() { // a batched notice names several
		if r < 0 || r >= m.size || r == m.rank {
			continue
		}
		m.mu.Lock()
		m.known[r] = true // the job knows: no report of ours needed
		m.departed[r] = true
		p := m.pairs[r]
		// a rank that left never comes back: its pair goes, and with it
		// the closed link (a manager whose workers come and go would
		// keep them all); its connect, if one is running, still ends
		delete(m.pairs, r)
		m.mu.Unlock()
		err := fmt.Errorf("rank %d %s: %w", r, why, peer.ErrProcFailed)
		if p != nil {
			p.kill(err)
		}
		m.ep.FailPeer(r, err)
	}
}

// Abort tells the server this rank called Abort with code at where (so
// every rank learns the job is over, with that code), then leaves the job
// as Close does. Telling is bounded by a short wait: a server that does
// not take the notice still sees the rank leave.
func (m *Mesh) Abort(code int, where string) {
	m.stopTelemetry() // its last report first: what the rank did until now
	ctx, cancel := context.WithTimeout(m.ctx, abortNotice)
	_ = m.client.Send(ctx, &signaling.Abort{Code: code, Where: where})
	cancel()
	m.Close()
}

// Leave tells the server that this rank is about to leave the job
// cleanly (Finalize, once its last messages are through), after the
// telemetry reporter's last report, if one runs: the peers that
// see its links close next report them (Suspect), and the server must not
// declare it failed for that. Call it before the endpoint closes its
// links, then Close. Telling is bounded by a short wait, as Abort's; a
// word that does not arrive in time is covered by the server's grace for
// a reported rank (two seconds), which a rank with many links to close
// may outlast.
func (m *Mesh) Leave() {
	m.stopTelemetry() // its last report first: a dashboard sees the rank's last operations
	ctx, cancel := context.WithTimeout(m.ctx, abortNotice)
	_ = m.client.Send(ctx, &signaling.Leaving{})
	cancel()
}

// Close leaves the job: connections in progress give up, the signaling
// connection closes and every goroutine of the mesh ends.
func (m *Mesh) Close() {
	m.unregister()
	m.stopTelemetry()
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	m.cancel()
	_ = m.client.Close() // only ever says it was closed already
	m.wg.Wait()
}

// nativeRemote reports whether rank announced itself native or WASI.
//
// Not where the job has TURN servers: the native data path is not proven
// through relays (netlab's relay tests failed on it), so relayed jobs
// keep pion's own stack.
func (m *Mesh) nativeRemote(rank int) bool {
	for _, s := range m.net.ICEServers {
		for _, u := range s.URLs {
			if strings.HasPrefix(u, "turn:") || strings.HasPrefix(u, "turns:") {
				return false
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return hostKind(m.kinds[rank])
}
