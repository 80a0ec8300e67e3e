package mesh

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/meshmpi/meshmpi/peer"
	"github.com/meshmpi/meshmpi/signaling"
)

// SettingLink is the job setting that picks how ranks link: "auto" (the
// default: memory links between ranks of one process, a same-host link
// between processes of one host, WebRTC otherwise) or "webrtc" (WebRTC
// for every pair, for tests and benchmarks). Every rank reads it from its
// welcome, so the two ends of a pair always agree.
const SettingLink = "link"

// linkKind is how a pair links.
type linkKind int

const (
	linkWebRTC linkKind = iota
	linkMemory          // both ranks' meshes live in this process
	linkHost            // both ranks run on this host as one user (link_host*.go)
)

// localKey names a mesh in this process: a rank of a job on a server.
// Two jobs, or two servers with the same job id, never meet.
type localKey struct {
	url, job string
	rank     int
}

// local is the registry of the meshes in this process, for memory links
// between them: the ranks of a Run(WithJob), the WASI guests one host
// process carries. coming holds the certificates of ranks of this
// process that are joining (Reserve): a rank's mesh exists only once its
// welcome came, and a peer that already heard of it from the server
// would otherwise find no mesh yet and take another link (shm between
// two ranks of one process, in one run out of some).
var local struct {
	sync.Mutex
	meshes map[localKey]*Mesh
	coming map[string]*reservation
}

// A reservation stands for a rank of this process from before it joins
// until its mesh registers (or it gives up).
type reservation struct {
	done chan struct{} // closed when mesh is set or the join gave up
	mesh *Mesh
}

// Reserve says that a rank of this process is about to join with the
// certificate whose fingerprint is print: a peer in this process that
// hears of it before its mesh exists waits for the mesh instead of
// linking otherwise. Call it before dialing the job; release undoes it
// if the join fails before New (harmless after).
func Reserve(print string) (release func()) {
	if print == "" {
		return func() {}
	}
	r := &reservation{done: make(chan struct{})}
	local.Lock()
	if local.coming == nil {
		local.coming = map[string]*reservation{}
	}
	local.coming[print] = r
	local.Unlock()
	return func() {
		local.Lock()
		defer local.Unlock()
		if local.coming[print] == r {
			delete(local.coming, print)
		}
		select {
		case <-r.done:
		default:
			close(r.done)
		}
	}
}

// register enters m in the registry; a mesh without a certificate is
// not entered (its peers could not tell it from another).
func (m *Mesh) register() {
	if m.print == "" {
		return
	}
	local.Lock()
	defer local.Unlock()
	if local.meshes == nil {
		local.meshes = map[localKey]*Mesh{}
	}
	local.meshes[localKey{m.client.URL(), m.client.Welcome().Job, m.rank}] = m
	if r := local.coming[m.print]; r != nil {
		r.mesh = m
		close(r.done)
		delete(local.coming, m.print)
	}
}

// unregister takes m out of the registry.
func (m *Mesh) unregister() {
	k := localKey{m.client.URL(), m.client.Welcome().Job, m.rank}
	local.Lock()
	defer local.Unlock()
	if local.meshes[k] == m {
		delete(local.meshes, k)
	}
}

// awaitRegistered waits for the mesh of a rank of this process that
// reserved the certificate print and has not registered yet; nil at once
// if no rank of this process did.
func (m *Mesh) awaitRegistered(print string) {
	if print == "" {
		return
	}
	local.Lock()
	r := local.coming[print]
	local.Unlock()
	if r == nil {
		return
	}
	select {
	case <-r.done:
	case <-m.ctx.Done():
	}
}

// registered returns remote's mesh if it lives in this process, nil if
// not (or not yet).
func (m *Mesh) registered(remote int) *Mesh {
	if m.print == "" {
		return nil
	}
	local.Lock()
	defer local.Unlock()
	r := local.meshes[localKey{m.client.URL(), m.client.Welcome().Job, remote}]
	if r == m {
		return nil
	}
	return r
}

// localPeer returns remote's mesh if it lives in this process and is the
// one the server vouched for at both ends: its certificate is the one
// this rank was told, and this rank's is the one it was told (once the
// remote heard the roster). Only the lower rank of a pair asks: the
// higher one follows what it does. A WASI host's relay may be either
// end: it takes a memory link's frames without waiting on the writer's
// goroutine (peer.FlowHandler), as a rank's endpoint does.
func (m *Mesh) localPeer(remote int) *Mesh {
	m.awaitRegistered(m.vouched(remote))
	r := m.registered(remote)
	if r == nil || r.print == "" || m.vouched(remote) != r.print {
		return nil
	}
	select {
	case <-r.ready:
	case <-r.ctx.Done():
		return nil
	case <-m.ctx.Done():
		return nil
	}
	if r.vouched(m.rank) != m.print {
		return nil
	}
	return r
}

// choose picks how this rank links to remote.
func (m *Mesh) choose(remote int) (linkKind, *Mesh) {
	if m.forceWebRTC {
		return linkWebRTC, nil
	}
	if r := m.localPeer(remote); r != nil {
		return linkMemory, r
	}
	m.mu.Lock()
	same := m.hosts[m.rank] != "" && m.hosts[m.rank] == m.hosts[remote] &&
		hostKind(m.kinds[m.rank]) && hostKind(m.kinds[remote])
	m.mu.Unlock()
	if same && hostLinks {
		return linkHost, nil
	}
	return linkWebRTC, nil
}

// hostKind says whether a rank of kind k can share memory with another
// process: a native process, or the host process of a WASI guest; a
// browser tab cannot.
func hostKind(k signaling.ClientKind) bool {
	return k == signaling.KindNative || k == signaling.KindWASI
}

// connectMemory links this rank, the lower of the pair, to remote's mesh
// r in this process: it makes the pair of memory links and hands the
// remote its end (answer takes it).
func (p *pair) connectMemory(r *Mesh) (peer.Link, error) {
	m := p.m
	mine, theirs := peer.NewMemoryLinks(m.frameCap(p.remote))
	if !r.pair(m.rank, false).handOver(theirs) {
		mine.Close()
		theirs.Close()
		return nil, fmt.Errorf("memory link: rank %d's mesh is closed", p.remote)
	}
	return mine, nil
}

// answer is the higher rank's side of a connect: it follows what the
// lower rank does, which its first move says: a memory link handed over
// (connectMemory), a same-host link's offer (signaling.SignalLink), or a
// WebRTC offer.
func (p *pair) answer(vouched string) (peer.Link, error) {
	m := p.m
	for {
		select {
		case l := <-p.local:
			return l, nil
		default:
		}
		p.mu.Lock()
		dead := p.dead
		first := ""
		if len(p.queue) > 0 {
			first = p.queue[0].kind
		}
		p.mu.Unlock()
		switch {
		case dead != nil:
			return nil, dead
		case first == signalLink:
			l, err := p.connectHost(false)
			if errors.Is(err, errHostFallback) {
				continue // refused: the lower rank offers WebRTC next
			}
			return l, err
		case first == peer.SignalOffer:
			return connectLink(m.ctx, m.net, vouched, p, false, false)
		case first != "":
			// a stray before the move (a candidate of an earlier try):
			// not the lower rank's move
			p.mu.Lock()
			p.queue = p.queue[1:]
			p.mu.Unlock()
			continue
		}
		select {
		case l := <-p.local:
			return l, nil
		case <-p.notify:
		case <-m.ctx.Done():
			return nil, context.Cause(m.ctx)
		}
	}
}

// handOver gives the pair the link its lower rank made; false if the pair
// already ended or has one.
func (p *pair) handOver(l peer.Link) bool {
	select {
	case <-p.done:
		return false
	default:
	}
	select {
	case p.local <- l:
		return true
	default:
		return false
	}
}

// signalLink is the pair signal of a same-host link's set-up
// (signaling.SignalLink), beside peer's Signal* kinds.
const signalLink = "link"

// sameHostLink says whether a link kind (peer.Path.Link) skips WebRTC
// between ranks of one host.
func sameHostLink(kind string) bool {
	return kind == "memory" || kind == "shm" || kind == "unix"
}

// wasiFrame is the largest frame a WASI host relays to its guest in one
// piece: the guest/host stream's limit, wasm.MaxFrame (a 1 MiB payload
// and its header; a test of mesh holds the two equal), which mesh
// does not import so that native ranks do not link the guest's code.
const wasiFrame = 1<<20 + peer.HeaderLen

// frameCap is the cap on the frames of a same-host link to remote: a link
// with a WASI rank's host at either end carries frames its guest can
// take; 0 (none) between other ranks. Both ends compute the same.
func (m *Mesh) frameCap(remote int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kinds[m.rank] == signaling.KindWASI || m.kinds[remote] == signaling.KindWASI {
		return wasiFrame
	}
	return 0
}
