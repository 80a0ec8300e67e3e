//go:build !js

package signaling

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/coder/websocket"
)

// Bus is what a signaling server needs from the cluster it is part of
// (Config.Cluster): a way to reach the other servers, to agree which of
// them serves a job, and to keep a job's state where the server that
// takes it over finds it. Package natsbus implements it over NATS.
//
// Each job is served by one server, its home: the hub state of the job
// (members, seats, names, failures) lives there, as in a server of its
// own. A rank may connect to any server: one that is not its job's home
// bridges the rank's websocket to the home (its messages go there as
// they came, the home's answers come back). When a server is lost, the
// ranks it held reconnect to another server and take their seats back
// (Join.Resume); the jobs it was home of move to a live server, which
// loads their last saved state. Links between ranks are peer-to-peer and
// never pass through any of this.
type Bus interface {
	// ID names this server in the cluster, unique per process.
	ID() string
	// Start begins delivering: deliver gets each datagram another
	// server sent this one (Send), in the order that server sent them,
	// one at a time; lost is told of each server that stopped
	// answering or left (Leave), once. Neither may block for long.
	Start(deliver func(from string, data []byte), lost func(server string)) error
	// Send sends data to the server named to: at most once, in order.
	Send(to string, data []byte) error
	// Home names the live server that serves job, making this server its
	// home when none does. took says this call made it the home of a
	// job another server served until it was lost: its saved state is
	// to be loaded (LoadJob).
	Home(ctx context.Context, job string) (home string, took bool, err error)
	// SaveJob stores job's state for the server that may take it over;
	// LoadJob reads it (nil, nil when there is none); DropJob forgets
	// the job: its state and its home.
	SaveJob(job string, state []byte) error
	LoadJob(job string) ([]byte, error)
	DropJob(job string) error
	// Leave tells the other servers this one is going (drain): they
	// treat it as lost at once.
	Leave() error
}

// DefaultResumeGrace is how long a seat waits for its rank when the
// server that held the rank's connection was lost (Config.ResumeGrace).
const DefaultResumeGrace = 15 * time.Second

// The datagrams between servers: op, the bridged connection's id (8
// bytes, big endian, the bridging server's numbering), the job id's
// length and the job id, then the op's data.
const (
	opOpen   byte = iota + 1 // bridge → home: a rank's websocket; data: its remote address
	opFrame                  // bridge → home: a message the rank sent, as it came
	opClosed                 // bridge → home: its websocket closed; data: closeNote
	opOut                    // home → bridge: a message for the rank, encoded
	opEnd                    // home → bridge: the last words and the close; data: endNote
)

func datagram(op byte, id uint64, job string, data []byte) []byte {
	b := make([]byte, 0, 10+len(job)+len(data))
	b = append(b, op)
	b = binary.BigEndian.AppendUint64(b, id)
	b = append(b, byte(len(job)))
	b = append(b, job...)
	return append(b, data...)
}

func parseDatagram(b []byte) (op byte, id uint64, job string, data []byte, err error) {
	if len(b) < 10 || len(b) < 10+int(b[9]) {
		return 0, 0, "", nil, fmt.Errorf("%w: cluster datagram of %d bytes", ErrMalformed, len(b))
	}
	n := int(b[9])
	return b[0], binary.BigEndian.Uint64(b[1:9]), string(b[10 : 10+n]), b[10+n:], nil
}

// closeNote says how a bridged websocket closed (opClosed).
type closeNote struct {
	Clean        bool      `json:"clean,omitempty"`
	Unresponsive bool      `json:"unresponsive,omitempty"`
	Moved        bool      `json:"moved,omitempty"` // its server is draining: the rank resumes elsewhere
	Code         ErrorCode `json:"code,omitempty"`  // the bridge's own error, if it closed it
	Err          string    `json:"err,omitempty"`
}

// endNote is the home's close of a bridged connection (opEnd).
type endNote struct {
	Error *Error `json:"error,omitempty"`
	Hard  bool   `json:"hard,omitempty"`
}

// bridge is the state of a websocket whose job another server serves.
// home, rank and key are guarded by Server.mu.
type bridge struct {
	id   uint64
	job  string
	join []byte // the rank's Join, sent again to a new home until welcomed
	home string
	rank int
	key  string // the seat's resume key, from the home's Welcome
}

// remoteKey names a bridged connection at its home.
type remoteKey struct {
	server string
	id     uint64
}

// busWire carries a conn's messages to the server that holds its
// websocket.
type busWire struct {
	s      *Server
	server string
	id     uint64
	job    string
}

func (w busWire) write(_ context.Context, data []byte) error {
	return w.s.cfg.Cluster.Send(w.server, datagram(opOut, w.id, w.job, data))
}

func (busWire) ping(context.Context) error { return nil } // its server pings it

func (w busWire) end(e *Error, hard bool, _ time.Duration) {
	data, _ := json.Marshal(endNote{Error: e, Hard: hard})
	_ = w.s.cfg.Cluster.Send(w.server, datagram(opEnd, w.id, w.job, data))
}

func (busWire) closeNow() {}

// home is the server of job, taking the job over (and loading its saved
// state) when its server was lost. One caller at a time, so that a
// job's state is loaded before any of its ranks is handled.
func (s *Server) home(job string) (string, error) {
	s.homeMu.Lock()
	defer s.homeMu.Unlock()
	if h, ok := s.homes[job]; ok {
		return h, nil
	}
	if len(s.homes) >= maxHomes {
		clear(s.homes) // a cache: jobs served elsewhere end unseen
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.WriteTimeout)
	defer cancel()
	h, took, err := s.cfg.Cluster.Home(ctx, job)
	if err != nil {
		return "", err
	}
	if took {
		if err := s.restore(job); err != nil {
			s.log.Error("job state not loaded", "job", job, "err", err)
		}
	}
	s.homes[job] = h
	return h, nil
}

// maxHomes bounds the cache of jobs' homes.
const maxHomes = 1 << 14

// bridgeJoin makes c, a websocket whose first message is the Join j
// (data as it came), a bridge to j's job's home if that is another
// server, and reports whether it did.
func (s *Server) bridgeJoin(c *conn, j *Join, data []byte) bool {
	if _, err := VerifyToken(s.cfg.Secret, j.Token, j.Job, time.Now()); err != nil {
		return false // refused here: only a job's own ranks claim it a home
	}
	home, err := s.home(j.Job)
	if err != nil {
		c.kill(&Error{Code: CodeInternal, Message: truncate("cluster: " + err.Error())}, false)
		return true
	}
	if home == s.cfg.Cluster.ID() {
		return false
	}
	b := &bridge{job: j.Job, join: data, home: home, rank: -1}
	s.mu.Lock()
	s.nextBridge++
	b.id = s.nextBridge
	s.bridges[b.id] = c
	c.bridge = b
	s.mu.Unlock()
	b.open(s, c.remote, data)
	s.recheckHome(c, home)
	return true
}

// recheckHome moves bridge c on if the home it was just given, home, was
// found lost between the lookup and the bridge's registration: lost
// forgets the home before it looks for bridges to move, so a bridge
// registered after that look finds the home forgotten here.
func (s *Server) recheckHome(c *conn, home string) {
	s.homeMu.Lock()
	h, ok := s.homes[c.bridge.job]
	s.homeMu.Unlock()
	if ok && h == home {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.rehome(c)
	}()
}

// open introduces the bridge to its home and sends it join.
func (b *bridge) open(s *Server, remote string, join []byte) {
	s.mu.Lock()
	home := b.home
	s.mu.Unlock()
	bus := s.cfg.Cluster
	_ = bus.Send(home, datagram(opOpen, b.id, b.job, []byte(remote)))
	_ = bus.Send(home, datagram(opFrame, b.id, b.job, join))
}

// forward passes on a message the rank sent.
func (b *bridge) forward(c *conn, data []byte) {
	s := c.s
	s.mu.Lock()
	home := b.home
	s.mu.Unlock()
	_ = s.cfg.Cluster.Send(home, datagram(opFrame, b.id, b.job, data))
}

// closed tells the home how the rank's websocket closed.
func (b *bridge) closed(c *conn, cause error) {
	s := c.s
	s.mu.Lock()
	delete(s.bridges, b.id)
	home, moved := b.home, s.draining
	s.mu.Unlock()
	n := closeNote{Clean: websocket.CloseStatus(cause) == websocket.StatusNormalClosure, Unresponsive: c.unresponsive.Load(), Moved: moved}
	if cause != nil {
		n.Err = truncate(cause.Error())
	}
	if c.isKilled() && c.killErr != nil {
		n.Code = c.killErr.Code
	}
	data, _ := json.Marshal(n)
	_ = s.cfg.Cluster.Send(home, datagram(opClosed, b.id, b.job, data))
}

// deliver acts on a datagram from another server of the cluster.
func (s *Server) deliver(from string, dg []byte) {
	op, id, job, data, err := parseDatagram(dg)
	if err != nil {
		s.log.Error("bad cluster datagram", "from", from, "err", err)
		return
	}
	switch op {
	case opOut, opEnd:
		s.mu.Lock()
		c := s.bridges[id]
		if c == nil || c.bridge.home != from {
			s.mu.Unlock()
			return // closed since, or moved to another home
		}
		b := c.bridge
		if op == opOut && b.key == "" {
			// the Welcome carries the seat's key: the bridge resumes
			// the seat with it if this home is lost
			if m, err := Decode(data); err == nil {
				if w, ok := m.(*Welcome); ok {
					b.rank, b.key = w.Rank, w.Resume
				}
			}
		}
		s.mu.Unlock()
		if op == opOut {
			c.sendData(data)
			return
		}
		var n endNote
		if err := json.Unmarshal(data, &n); err != nil {
			n = endNote{Error: &Error{Code: CodeInternal, Message: "cluster: bad close"}}
		}
		c.kill(n.Error, n.Hard)
	case opOpen:
		key := remoteKey{from, id}
		s.mu.Lock()
		if s.remotes[key] != nil || s.closed {
			s.mu.Unlock()
			return
		}
		s.remotes[key] = newWireConn(s, busWire{s: s, server: from, id: id, job: job}, string(data))
		s.mu.Unlock()
	case opFrame:
		s.mu.Lock()
		c := s.remotes[remoteKey{from, id}]
		s.mu.Unlock()
		if c != nil {
			c.receive(true, data)
		}
	case opClosed:
		key := remoteKey{from, id}
		s.mu.Lock()
		c := s.remotes[key]
		delete(s.remotes, key)
		s.mu.Unlock()
		if c == nil {
			return
		}
		var n closeNote
		_ = json.Unmarshal(data, &n)
		s.remoteClosed(c, n)
	default:
		s.log.Error("bad cluster datagram", "from", from, "op", op)
	}
}

// remoteClosed is the end of a bridged rank's websocket at its home, as
// run's is for a websocket of its own.
func (s *Server) remoteClosed(c *conn, n closeNote) {
	switch {
	case n.Moved:
		s.mu.Lock()
		s.detach(c)
		s.mu.Unlock()
	case n.Unresponsive && s.declareFrozen(c):
	default:
		c.unresponsive.Store(n.Unresponsive)
		if n.Code != "" {
			c.kill(&Error{Code: n.Code}, true)
		}
		var cause error = websocket.CloseError{Code: websocket.StatusNormalClosure}
		if !n.Clean {
			cause = errors.New(n.Err)
		}
		s.leave(c, cause)
	}
	c.kill(nil, true)
}

// lost acts on the loss of a server of the cluster: the seats of the
// ranks it held wait for them to resume through another server, and the
// bridges to it move to their jobs' new homes.
func (s *Server) lost(server string) {
	s.log.Info("cluster server lost", "server", server)
	s.homeMu.Lock()
	for job, h := range s.homes {
		if h == server {
			delete(s.homes, job)
		}
	}
	s.homeMu.Unlock()
	s.mu.Lock()
	for k, c := range s.remotes {
		if k.server == server {
			delete(s.remotes, k)
			s.detach(c)
			c.kill(nil, true)
		}
	}
	var moving []*conn
	for _, c := range s.bridges {
		if c.bridge.home == server {
			moving = append(moving, c)
		}
	}
	s.mu.Unlock()
	for _, c := range moving {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.rehome(c)
		}()
	}
}

// rehome moves bridge c to its job's new home, resuming its seat there.
func (s *Server) rehome(c *conn) {
	b := c.bridge
	home, err := s.home(b.job)
	if err != nil {
		c.kill(&Error{Code: CodeInternal, Message: truncate("cluster: " + err.Error())}, false)
		return
	}
	s.mu.Lock()
	if s.bridges[b.id] != c || b.home == home {
		s.mu.Unlock()
		return // gone, or its home stands (a recheck after a cache clear)
	}
	b.home = home
	join := b.join
	if b.key != "" {
		if m, err := Decode(b.join); err == nil {
			j := m.(*Join)
			rank := b.rank
			j.Rank, j.Resume = &rank, b.key
			join, _ = Encode(j)
		}
	}
	s.mu.Unlock()
	b.open(s, c.remote, join)
	s.recheckHome(c, home)
}

// detach takes c, a member whose connection went with its server (or
// moved), out of its seat: a conn without a wire holds the seat and
// queues the rank's messages until it resumes, or for ResumeGrace, after
// which the rank has left. Server.mu is held.
func (s *Server) detach(c *conn) {
	j := c.job
	if j == nil || j.members[c.rank] != c || s.closed {
		return
	}
	p := newWireConn(s, nil, "resuming")
	s.reseat(j, c, p)
	p.grace = time.AfterFunc(s.cfg.ResumeGrace, func() { s.leave(p, errResumeGrace) })
}

// errResumeGrace is why a rank whose server was lost has left: it did not
// take its seat back in time.
var errResumeGrace = errors.New("its signaling server was lost and it did not take its seat back through another in time")

// reseat puts to in from's seat: its membership, names, waiting lookups,
// and the messages queued for it. Server.mu is held.
func (s *Server) reseat(j *job, from, to *conn) {
	j.members[from.rank] = to
	to.job, to.rank, to.kind, to.print = j, from.rank, from.kind, from.print
	to.abort, to.leaving, to.waits = from.abort, from.leaving, from.waits
	for service, p := range j.names {
		if p.owner == from {
			j.names[service] = published{port: p.port, owner: to}
		}
	}
	for _, waiting := range j.waiting {
		for i, w := range waiting {
			if w == from {
				waiting[i] = to
			}
		}
	}
	from.qmu.Lock()
	queue := from.queue
	from.queue, from.queued = nil, 0
	from.qmu.Unlock()
	to.push(queue...)
	if from.grace != nil {
		from.grace.Stop()
	}
}

// resume gives c the seat of m.Rank in j, whose key m.Resume names: the
// rank's previous connection went with its server. The job's saved state
// may be older than the rank's admission (saves wait a moment, save), so
// a seat the state holds no rank in is taken back too, the key being the
// proof the rank was admitted; a job the server has no state of at all is
// made afresh from the token. Server.mu is held.
func (s *Server) resume(c *conn, j *job, m *Join, claims Claims) *Error {
	r := *m.Rank
	if subtle.ConstantTimeCompare([]byte(resumeKey(s.cfg.Secret, claims, r)), []byte(m.Resume)) != 1 || r >= claims.Limit() {
		return &Error{Code: CodeResumeRefused, Message: fmt.Sprintf("rank %d has no seat to take back: the key is wrong", r)}
	}
	if j == nil {
		if len(s.jobs) >= s.cfg.MaxJobs {
			return &Error{Code: CodeTooManyJobs, Message: fmt.Sprintf("server holds %d jobs", s.cfg.MaxJobs)}
		}
		j = newJob(m.Job, claims)
		s.jobs[m.Job] = j
	}
	if why, failed := j.failed[r]; failed {
		return &Error{Code: CodeDeclaredFailed, Message: truncate(fmt.Sprintf("rank %d was declared failed and cannot rejoin the job (%s)", r, why))}
	}
	for len(j.members) <= r { // a late rank the state is too old to know
		j.members, j.kinds, j.prints, j.hosts = append(j.members, nil), append(j.kinds, ""), append(j.prints, ""), append(j.hosts, "")
	}
	old := j.members[r]
	if old == nil {
		// a seat the saved state did not know taken: the rank is back
		// as it was, without a second Welcome's worth of news for others
		j.members[r], j.kinds[r], j.prints[r], j.hosts[r] = c, m.Kind, m.Fingerprint, m.Host
		j.present++
		j.expires = max(j.expires, claims.Expires)
		c.job, c.rank, c.kind, c.print = j, r, m.Kind, m.Fingerprint
		s.saveSoon(j)
	}
	w, _ := Encode(s.welcome(j, r, claims, true))
	c.push(w) // before what waited for the rank
	if old != nil {
		s.reseat(j, old, c)
		old.kill(nil, true)
	}
	s.resumed.Add(1)
	s.log.Info("rank resumed", "job", j.id, "rank", r, "remote", c.remote)
	if old == nil && !j.started && j.present == j.claims.Size {
		s.formed(j) // the state predates the last joins: it forms now
	}
	return nil
}

// resumeDomain separates resume keys from any other use of the secret.
const resumeDomain = "meshmpi-signal-resume-v1\x00"

// resumeKey is the key of seat rank of the job of claims: a MAC under the
// server's secret, so every server of the cluster can check it without
// any state, and only the rank its Welcome went to knows it.
func resumeKey(secret []byte, claims Claims, rank int) string {
	h := hmac.New(sha256.New, secret)
	fmt.Fprintf(h, "%s%s\x00%d\x00%d\x00%d", resumeDomain, claims.Job, claims.Size, claims.Expires, rank)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// jobState is what a job's home saves for the server that takes it over.
type jobState struct {
	Claims   Claims               `json:"claims"`
	Started  bool                 `json:"started,omitempty"`
	Aborted  bool                 `json:"aborted,omitempty"`
	Expires  int64                `json:"expires"`
	Departed int                  `json:"departed,omitempty"`
	Kinds    []ClientKind         `json:"kinds"`
	Prints   []string             `json:"prints"`
	Hosts    []string             `json:"hosts"`
	Present  []bool               `json:"present"` // by rank
	Failed   map[int]string       `json:"failed,omitempty"`
	Names    map[string]savedName `json:"names,omitempty"`
}

// savedName is a published service in a jobState: its port and the rank
// that published it.
type savedName struct {
	Port string `json:"port"`
	Rank int    `json:"rank"`
}

// saveSoon saves j's state shortly, once for the changes of a moment.
// Server.mu is held.
func (s *Server) saveSoon(j *job) {
	if s.cfg.Cluster == nil || j.saving != nil {
		return
	}
	j.saving = time.AfterFunc(saveDelay, func() { s.save(j) })
}

// saveNow saves j's state before the caller goes on: a job's formation
// is saved before any rank hears of it, so a server that takes the job
// over never forms it twice. Server.mu is held: one short write.
func (s *Server) saveNow(j *job) {
	if s.cfg.Cluster == nil {
		return
	}
	data, _ := json.Marshal(j.state())
	if err := s.cfg.Cluster.SaveJob(j.id, data); err != nil {
		s.log.Error("job state not saved", "job", j.id, "err", err)
	}
}

// saveDelay gathers a job's changes into one save: a job forming costs a
// few saves, not one per rank.
const saveDelay = 50 * time.Millisecond

// save stores j's state, or forgets it if j is over.
func (s *Server) save(j *job) {
	s.saveMu.Lock() // saves leave in the order they were made
	defer s.saveMu.Unlock()
	s.mu.Lock()
	j.saving = nil
	if s.draining {
		s.mu.Unlock()
		return // Drain saved it last; the job is another server's now
	}
	over := s.jobs[j.id] != j
	var data []byte
	if !over {
		data, _ = json.Marshal(j.state())
	}
	s.mu.Unlock()
	var err error
	if over {
		err = s.cfg.Cluster.DropJob(j.id)
		s.homeMu.Lock()
		delete(s.homes, j.id)
		s.homeMu.Unlock()
	} else {
		err = s.cfg.Cluster.SaveJob(j.id, data)
	}
	if err != nil {
		s.log.Error("job state not saved", "job", j.id, "err", err)
	}
}

// state is j's jobState. Server.mu is held.
func (j *job) state() *jobState {
	st := &jobState{Claims: j.claims, Started: j.started, Aborted: j.aborted, Expires: j.expires, Departed: j.departed,
		Kinds: j.kinds, Prints: j.prints, Hosts: j.hosts, Present: make([]bool, len(j.members)), Failed: j.failed}
	for r, m := range j.members {
		st.Present[r] = m != nil
	}
	if len(j.names) > 0 {
		st.Names = make(map[string]savedName, len(j.names))
		for svc, p := range j.names {
			st.Names[svc] = savedName{p.port, p.owner.rank}
		}
	}
	return st
}

// restore loads the saved state of a job this server took over: its
// present ranks' seats wait for them to resume (detach).
func (s *Server) restore(id string) error {
	data, err := s.cfg.Cluster.LoadJob(id)
	if err != nil || data == nil {
		return err
	}
	var st jobState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("job %s state: %w", id, err)
	}
	n := len(st.Present)
	if n < st.Claims.Size || n > st.Claims.Limit() || len(st.Kinds) != n || len(st.Prints) != n || len(st.Hosts) != n {
		return fmt.Errorf("job %s state: %d seats for size %d: %w", id, n, st.Claims.Size, ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jobs[id] != nil {
		return nil
	}
	j := &job{id: id, claims: st.Claims, started: st.Started, aborted: st.Aborted, expires: st.Expires, departed: st.Departed,
		members: make([]*conn, n), kinds: st.Kinds, prints: st.Prints, hosts: st.Hosts, failed: st.Failed}
	for r, present := range st.Present {
		if !present {
			continue
		}
		p := newWireConn(s, nil, "resuming")
		p.job, p.rank, p.kind, p.print = j, r, st.Kinds[r], st.Prints[r]
		p.grace = time.AfterFunc(s.cfg.ResumeGrace, func() { s.leave(p, errResumeGrace) })
		j.members[r] = p
		j.present++
	}
	for svc, nm := range st.Names {
		if nm.Rank >= 0 && nm.Rank < n && j.members[nm.Rank] != nil {
			if j.names == nil {
				j.names = make(map[string]published)
			}
			j.names[svc] = published{port: nm.Port, owner: j.members[nm.Rank]}
		}
	}
	s.jobs[id] = j
	s.log.Info("job taken over", "job", id, "present", j.present, "started", j.started)
	return nil
}

// Drain moves this server's ranks to the other servers of its cluster
// and closes it: the jobs it serves are saved and handed over (Bus.Leave),
// every rank connected here is told to reconnect elsewhere (Move), and
// Drain returns once they all have, or ctx ends (then Close cuts the
// rest). Without a cluster it is Close.
func (s *Server) Drain(ctx context.Context) error {
	if s.cfg.Cluster == nil {
		return s.Close()
	}
	s.mu.Lock()
	s.draining = true
	states := make(map[string][]byte, len(s.jobs))
	for id, j := range s.jobs {
		states[id], _ = json.Marshal(j.state())
	}
	s.mu.Unlock()
	s.saveMu.Lock()
	for id, data := range states {
		if err := s.cfg.Cluster.SaveJob(id, data); err != nil {
			s.log.Error("job state not saved", "job", id, "err", err)
		}
	}
	s.saveMu.Unlock()
	err := s.cfg.Cluster.Leave()
	s.mu.Lock()
	s.closed = true // no more joins; departures now are moves
	for c := range s.conns {
		c.send(&Move{Reason: "server draining"})
	}
	s.mu.Unlock()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		left := len(s.conns)
		s.mu.Unlock()
		if left == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, s.Close())
		case <-t.C:
		}
	}
	return errors.Join(err, s.Close())
}
