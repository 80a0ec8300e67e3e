//go:build !js

package signaling

import (
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// job is a room: its world of claims.Size ranks, and the late ranks
// that join it once formed if its claims let it grow (claims.Max).
// Guarded by Server.mu.
type job struct {
	id      string
	claims  Claims  // the first joiner's; every other joiner's are the same world
	members []*conn // by rank; nil when absent. Size long, and one longer per late rank admitted
	// kinds, prints and hosts are what each rank announced when it
	// joined (Join.Kind, Join.Fingerprint, Join.Host), by rank, kept
	// after it leaves: a late rank's Ready tells them.
	kinds    []ClientKind
	prints   []string
	hosts    []string
	aborted  bool // a rank called Abort after the job formed: no late rank joins it
	present  int
	started  bool  // Ready was sent: no more joins
	expires  int64 // the latest expiry of the members' tokens: how long the job is remembered once over
	departed int   // ranks gone since Ready

	// Departures after the first wait here for one notice to every
	// member (flushDepartures), so a job collapsing at once costs a few
	// messages per rank, not one per pair.
	pending []int
	flush   *time.Timer   // set while pending waits
	window  time.Duration // the wait before the next notice

	// failed holds why each rank the server declared failed was declared
	// (fail-stop: its seat refuses it); suspects the declarations waiting
	// out suspectGrace, by rank. Both nil until the first.
	failed   map[int]string
	suspects map[int]*time.Timer

	// names are the services the job's ranks published (Publish), by
	// service, at most MaxNames; waiting the lookups parked until a
	// service is published (Lookup.Wait), by service, in the order they
	// came. Both nil until the first.
	names   map[string]published
	waiting map[string][]*conn

	// tele is the job's record for viewers, made at its first event
	// (telemetry_server.go).
	tele *jobTele

	// saving is set while a save of the job's state waits (saveSoon; in
	// a cluster only).
	saving *time.Timer
}

// newJob is job id's room before its first rank is admitted, sized for
// its world.
func newJob(id string, claims Claims) *job {
	return &job{id: id, claims: claims, members: make([]*conn, claims.Size),
		kinds: make([]ClientKind, claims.Size), prints: make([]string, claims.Size), hosts: make([]string, claims.Size)}
}

// published is one service's name: its port, and the connection of the
// rank that published it, whose departure removes it (forget).
type published struct {
	port  string
	owner *conn
}

// suspectGrace is how long a rank a peer reported lost (Suspect) has to
// leave on its own before the server declares it failed: a rank that
// finalizes closes its links before its signaling connection (one after
// the other: 0.4 s for 7 links on a quiet machine), and the peers that see
// the links close must not get it declared failed for that. A rank that
// says it is leaving first (Leaving) needs no grace; the grace covers the
// rest, and the race between its word and a peer's report.
const suspectGrace = 2 * time.Second

// A formed job's later departures are announced in batches: the first
// batch goes out departureBatch after the departure that opened it, and
// each batch's wait doubles up to maxDepartureBatch. Every rank hears of
// every departure within a second, and N departures cost N messages per
// batch: a job whose ranks leave at once costs a few N; one whose ranks
// leave over T seconds at most N·(6+T).
const (
	departureBatch    = 50 * time.Millisecond
	maxDepartureBatch = time.Second
)

// seated says the job's tokens name their seats: a launcher's job, whose
// ranks are processes that will not come back, so a departure before the
// job forms fails it (an open job's seat is free again for the next
// volunteer).
func (j *job) seated() bool { return j.claims.Seat != nil }

// grave is what the server remembers of a job that is over (failed before
// it formed, or formed and lost every rank), so that a rank joining late
// hears why instead of waiting in a job that will never form, and the job
// cannot form again under the same tokens. Guarded by Server.mu.
type grave struct {
	code    ErrorCode // CodeJobFailed or CodeJobEnded
	why     string
	expires int64 // unix seconds: when its tokens expire, so no join can reach it
	seq     uint64
}

type graveRef struct {
	id  string
	seq uint64
}

// truncate cuts s to MaxTextLen bytes at most, at a rune boundary: a
// rune cut in two would travel as U+FFFD, longer than its remains, and
// the message would exceed the limit its receiver checks.
func truncate(s string) string {
	if len(s) <= MaxTextLen {
		return s
	}
	n := MaxTextLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// handle acts on one decoded message; a non-nil result is fatal.
func (c *conn) handle(m Message) *Error {
	switch m := m.(type) {
	case *Join:
		return c.s.join(c, m)
	case *Signal:
		return c.s.relay(c, m)
	case *Path:
		return c.s.path(c, m)
	case *Abort:
		return c.s.abort(c, m)
	case *Suspect:
		return c.s.suspect(c, m)
	case *Leaving:
		return c.s.leaving(c)
	case *Publish:
		return c.s.publish(c, m)
	case *Unpublish:
		return c.s.unpublish(c, m)
	case *Lookup:
		return c.s.lookup(c, m)
	case *Telemetry:
		return c.s.telemetry(c, m)
	case *Ping:
		c.send(&Pong{ID: m.ID})
		return nil
	case *Pong:
		return nil
	}
	return &Error{Code: CodeProtocol, Message: fmt.Sprintf("clients may not send %q", m.Type())}
}

func (s *Server) join(c *conn, m *Join) *Error {
	now := time.Now()
	claims, err := VerifyToken(s.cfg.Secret, m.Token, m.Job, now)
	switch {
	case errors.Is(err, ErrExpired):
		return &Error{Code: CodeExpiredToken, Message: "token expired"}
	case err != nil:
		return &Error{Code: CodeBadToken, Message: "token invalid or for another job"}
	}
	if claims.Size > s.cfg.MaxJobSize {
		return &Error{Code: CodeJobMismatch, Message: fmt.Sprintf("job size %d above the server's limit %d", claims.Size, s.cfg.MaxJobSize)}
	}
	if claims.Limit() > s.cfg.MaxJobSize {
		return &Error{Code: CodeJobMismatch, Message: fmt.Sprintf("job max %d above the server's limit %d", claims.Limit(), s.cfg.MaxJobSize)}
	}
	if m.Rank != nil && *m.Rank >= claims.Limit() {
		return &Error{Code: CodeBadRank, Message: fmt.Sprintf("rank %d outside [0, %d)", *m.Rank, claims.Limit())}
	}
	want := m.Rank
	if claims.Seat != nil {
		// a seat token admits its rank only; "any rank" means that one
		if m.Rank != nil && *m.Rank != *claims.Seat {
			return &Error{Code: CodeBadRank, Message: fmt.Sprintf("this token admits rank %d only, not %d", *claims.Seat, *m.Rank)}
		}
		want = claims.Seat
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if c.job != nil {
		return &Error{Code: CodeProtocol, Message: "already joined"}
	}
	if g, ok := s.ended[m.Job]; ok {
		if now.Unix() < g.expires {
			return &Error{Code: g.code, Message: g.why}
		}
		delete(s.ended, m.Job) // its tokens have expired: the id is free
		s.forgetTele(m.Job)
	}
	j := s.jobs[m.Job]
	if m.Resume != "" {
		if j != nil && !j.claims.sameShape(claims) {
			return &Error{Code: CodeJobMismatch, Message: "token's size, max, settings or seating differ from the job's"}
		}
		return s.resume(c, j, m, claims)
	}
	if want != nil && *want >= claims.Size && (j == nil || !j.started) {
		return &Error{Code: CodeBadRank, Message: fmt.Sprintf("rank %d is a late rank of a job of size %d: late ranks join once the job formed, asking for no rank", *want, claims.Size)}
	}
	if claims.Late && (j == nil || !j.started) {
		// a late token never creates the job nor takes a seat of it
		return &Error{Code: CodeNotFormed, Message: fmt.Sprintf("job %s has not formed: a late token joins it once its %d ranks are present", m.Job, claims.Size)}
	}
	if j == nil {
		if len(s.jobs) >= s.cfg.MaxJobs {
			return &Error{Code: CodeTooManyJobs, Message: fmt.Sprintf("server holds %d jobs", s.cfg.MaxJobs)}
		}
		j = newJob(m.Job, claims)
		s.jobs[m.Job] = j
	} else if !j.claims.sameWorld(claims) {
		switch {
		case !j.claims.sameShape(claims):
			return &Error{Code: CodeJobMismatch, Message: "token's size, max, settings or seating differ from the job's"}
		case !j.seated() || claims.Seat != nil || !j.claims.grows():
			return &Error{Code: CodeJobMismatch, Message: "token's size, max, settings or seating differ from the job's"}
		case !j.started:
			// an open token of a seated job that grows admits late ranks only
			return &Error{Code: CodeNotFormed, Message: fmt.Sprintf("job %s has not formed: an open token of a seated job joins it as a late rank once its %d seats are present", j.id, claims.Size)}
		}
	}
	if want != nil {
		if why, failed := j.failed[*want]; failed {
			return &Error{Code: CodeDeclaredFailed, Message: truncate(fmt.Sprintf("rank %d was declared failed and cannot rejoin the job (%s)", *want, why))}
		}
	}
	if j.started {
		if !j.claims.grows() {
			return &Error{Code: CodeJobFull, Message: "job already started"}
		}
		return s.joinLate(c, j, m, claims, want)
	}
	rank := -1
	if want != nil {
		if j.members[*want] != nil {
			return &Error{Code: CodeRankTaken, Message: fmt.Sprintf("rank %d already joined", *want)}
		}
		rank = *want
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
	s.admit(c, j, m, claims, rank)
	if j.present == claims.Size {
		s.formed(j)
	}
	return nil
}

// formed starts j: every rank of its world is present. Server.mu is held.
func (s *Server) formed(j *job) {
	j.started = true
	s.saveNow(j)
	s.jobState(j, JobFormed, "")
	s.broadcast(j.ready(), j.members)
	s.log.Info("job ready", "job", j.id, "size", j.claims.Size, "max", j.claims.Limit())
}

// admit seats c at rank of j and sends it its Welcome. Server.mu is held.
func (s *Server) admit(c *conn, j *job, m *Join, claims Claims, rank int) {
	j.members[rank], j.kinds[rank], j.prints[rank], j.hosts[rank] = c, m.Kind, m.Fingerprint, m.Host
	j.present++
	j.expires = max(j.expires, claims.Expires)
	c.job, c.rank, c.kind, c.print = j, rank, m.Kind, m.Fingerprint
	s.joins.Add(1)
	late := rank >= claims.Size
	s.log.Info("rank joined", "job", j.id, "rank", rank, "size", claims.Size, "late", late, "kind", m.Kind, "remote", c.remote)
	s.joinedRank(j, rank, m.Kind, m.Agent)
	s.saveSoon(j)
	c.send(s.welcome(j, rank, claims, false))
}

// welcome is the Welcome of rank of j, whose token's claims are claims.
// Server.mu is held.
func (s *Server) welcome(j *job, rank int, claims Claims, resumed bool) *Welcome {
	ice := s.cfg.ICEServers
	if s.cfg.ICECredentials != nil {
		own := s.cfg.ICECredentials(j.id, rank, time.Unix(claims.Expires, 0))
		ice = append(slices.Clip(ice), own[:min(len(own), MaxICEServers-len(ice))]...)
	}
	w := &Welcome{
		Protocol: Version, Job: j.id, Rank: rank, Size: claims.Size,
		ICEServers: ice, Settings: claims.Settings,
		Limits: &Limits{MessageRate: s.cfg.MessageRate, MessageBurst: s.cfg.MessageBurst, MessageBytes: s.cfg.MaxMessageBytes,
			HeartbeatMillis: int(s.cfg.PingInterval * 9 / 10 / time.Millisecond)},
		Max: j.maxField(), Late: rank >= claims.Size, Resumed: resumed,
	}
	if s.cfg.Cluster != nil {
		w.Resume = resumeKey(s.cfg.Secret, claims, rank)
	}
	return w
}

// maxField is the job's Max as Welcome and Ready carry it: 0 unless it
// may grow.
func (j *job) maxField() int {
	if j.claims.grows() {
		return j.claims.Max
	}
	return 0
}

// ready is the job's Ready as of now: every rank admitted so far (the
// world's Size at formation; a late rank's gets the late ones too).
// Server.mu is held.
func (j *job) ready() *Ready {
	var prints []string
	if slices.ContainsFunc(j.prints, func(p string) bool { return p != "" }) {
		prints = slices.Clone(j.prints)
	}
	var hosts []string
	if slices.ContainsFunc(j.hosts, func(h string) bool { return h != "" }) {
		hosts = slices.Clone(j.hosts)
	}
	return &Ready{Size: j.claims.Size, Kinds: slices.Clone(j.kinds), Fingerprints: prints, Hosts: hosts, Max: j.maxField()}
}

// joinLate admits c to the formed job j, which may grow, as its next late
// rank: Size, Size+1, … up to Max-1 in the order they come, never one
// twice (a late rank that left is a failed process, like any other, not a
// seat to refill). It gets its Welcome and a Ready at once, and a Left
// for the ranks gone before it came; every other rank present gets
// joined{rank}. Server.mu is held.
func (s *Server) joinLate(c *conn, j *job, m *Join, claims Claims, want *int) *Error {
	if want != nil {
		if *want < len(j.members) && j.members[*want] != nil {
			return &Error{Code: CodeRankTaken, Message: fmt.Sprintf("rank %d already joined", *want)}
		}
		return &Error{Code: CodeJobFull, Message: fmt.Sprintf("job already started: rank %d is not free (a late rank asks for no rank and takes the next free one)", *want)}
	}
	if j.aborted {
		return &Error{Code: CodeJobEnded, Message: fmt.Sprintf("job %s is over: a rank called Abort", j.id)}
	}
	limit := j.claims.Limit()
	if len(j.members) >= limit {
		return &Error{Code: CodeJobFull, Message: fmt.Sprintf("job full: %d of %d ranks", len(j.members), limit)}
	}
	rank := len(j.members)
	j.members, j.kinds, j.prints, j.hosts = append(j.members, nil), append(j.kinds, ""), append(j.prints, ""), append(j.hosts, "")
	s.admit(c, j, m, claims, rank)
	s.lateJoins.Add(1)
	c.send(j.ready())
	var gone []int
	for r, mem := range j.members[:rank] {
		if mem == nil {
			gone = append(gone, r)
		}
	}
	if len(gone) > 0 {
		c.send(&Left{Rank: gone[0], Also: gone[1:], Reason: "left the job before this rank joined"})
	}
	others := make([]*conn, 0, j.present-1)
	for _, o := range j.members[:rank] {
		if o != nil {
			others = append(others, o)
		}
	}
	s.broadcast(&Joined{Rank: rank, Kind: m.Kind, Fingerprint: m.Fingerprint, Host: m.Host}, others)
	return nil
}

func (s *Server) relay(c *conn, m *Signal) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil {
		return &Error{Code: CodeProtocol, Message: "signal before join"}
	}
	if m.To >= j.claims.Limit() || m.To == c.rank {
		return &Error{Code: CodeBadRank, Message: fmt.Sprintf("signal to rank %d in a job of %d ranks from rank %d", m.To, j.claims.Limit(), c.rank)}
	}
	if m.To >= len(j.members) {
		// a late rank the job may admit, but has not yet
		s.countRejected(CodeRankAbsent)
		c.send(&Error{Code: CodeRankAbsent, Message: fmt.Sprintf("rank %d has not joined", m.To)})
		return nil
	}
	dst := j.members[m.To]
	if dst == nil {
		if j.started {
			// every rank was present at Ready: this one has left since,
			// and the sender hears so now if its batched notice is still
			// on its way (see leave)
			c.send(&Left{Rank: m.To, Reason: "left the job"})
			return nil
		}
		s.countRejected(CodeRankAbsent)
		c.send(&Error{Code: CodeRankAbsent, Message: fmt.Sprintf("rank %d is not present", m.To)})
		return nil
	}
	m.From = c.rank
	dst.send(m)
	s.relayed.Add(1)
	return nil
}

// path takes a rank's report of how it reached a peer: counted (direct
// or relayed, Stats.Paths) and logged.
// abort takes c's rank's Abort: the job's other ranks are told at once,
// before the rank closes its connection and exits (its client closes
// right after sending this): so the notice leaves ahead of the links the
// rank's exit breaks, and the others fail with the abort, not the loss.
// The departure that follows is not announced again.
func (s *Server) abort(c *conn, m *Abort) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil {
		return &Error{Code: CodeProtocol, Message: "abort before join"}
	}
	if c.abort != nil || j.members[c.rank] != c {
		return nil
	}
	c.abort = m
	j.aborted = j.aborted || j.started
	s.saveSoon(j)
	s.log.Info("rank called Abort", "job", j.id, "rank", c.rank, "code", m.Code, "where", m.Where)
	if j.started && !s.closed {
		others := make([]*conn, 0, len(j.members))
		for _, o := range j.members {
			if o != c {
				others = append(others, o)
			}
		}
		s.broadcast(&Left{Rank: c.rank, Reason: abortReason(m), Aborted: true, Code: m.Code}, others)
	}
	return nil
}

// abortReason is the departure reason of a rank that called Abort.
func abortReason(m *Abort) string {
	r := fmt.Sprintf("called Abort(%d)", m.Code)
	if m.Where != "" {
		r += " at " + m.Where
	}
	return r
}

// suspect takes c's rank's report that it lost its link to m.Rank. The
// server trusts it (see RATIONALE.md, "Why does one rank's report declare
// another failed?"): unless the rank leaves on its own within
// suspectGrace (a rank that finalizes closes its links just before its
// connection), it is declared failed. Reports about a rank already gone,
// already reported, or in a job not yet formed (no links yet) change
// nothing; a reporter can name only ranks of its own job, and one
// declaration per rank at most is pending, so a rank's reports cost the
// server at most the job's size in timers.
func (s *Server) suspect(c *conn, m *Suspect) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	switch {
	case j == nil:
		return &Error{Code: CodeProtocol, Message: "suspect before join"}
	case m.Rank >= len(j.members) || m.Rank == c.rank:
		s.countRejected(CodeBadRank)
		c.send(&Error{Code: CodeBadRank, Message: fmt.Sprintf("suspect rank %d in a job of size %d from rank %d", m.Rank, len(j.members), c.rank)})
		return nil
	}
	x := j.members[m.Rank]
	if !j.started || s.closed || j.members[c.rank] != c || x == nil || x.abort != nil || x.leaving || j.suspects[m.Rank] != nil {
		return nil
	}
	why := fmt.Sprintf("rank %d lost its link to it", c.rank)
	if m.Reason != "" {
		why += " (" + m.Reason + ")"
	}
	s.log.Info("rank suspected", "job", j.id, "rank", m.Rank, "by", c.rank, "why", m.Reason)
	if j.suspects == nil {
		j.suspects = make(map[int]*time.Timer)
	}
	rank := m.Rank
	j.suspects[rank] = time.AfterFunc(suspectGrace, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if j.suspects[rank] == nil {
			return // the rank left meanwhile (depart stopped the timer)
		}
		delete(j.suspects, rank)
		if j.members[rank] == x && !s.closed {
			s.declare(j, x, why)
		}
	})
	return nil
}

// leaving takes c's rank's word that it is about to leave cleanly: a
// declaration waiting on a report of its links is dropped, and later
// reports are ignored (suspect).
func (s *Server) leaving(c *conn) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil {
		return &Error{Code: CodeProtocol, Message: "leaving before join"}
	}
	if j.members[c.rank] != c {
		return nil
	}
	c.leaving = true
	if t := j.suspects[c.rank]; t != nil {
		t.Stop()
		delete(j.suspects, c.rank)
	}
	return nil
}

// publish takes c's rank's Publish: the service is named in c's job
// until a rank of the job unpublishes it or c's rank leaves (forget), and
// the lookups parked for it are answered, after the publisher. A service
// published already is name-taken (the name stays the first's), one past
// MaxNames name-limit.
func (s *Server) publish(c *conn, m *Publish) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil {
		return &Error{Code: CodeProtocol, Message: "publish before join"}
	}
	if j.members[c.rank] != c {
		return nil // gone: declared failed, its departure handled
	}
	if p, taken := j.names[m.Service]; taken {
		s.answer(c, &Name{Op: TypePublish, Service: m.Service, Code: CodeNameTaken,
			Message: fmt.Sprintf("rank %d published the service already", p.owner.rank)})
		return nil
	}
	if len(j.names) >= MaxNames {
		s.answer(c, &Name{Op: TypePublish, Service: m.Service, Code: CodeNameLimit,
			Message: fmt.Sprintf("the job has published %d services, the most it may", MaxNames)})
		return nil
	}
	if j.names == nil {
		j.names = make(map[string]published)
	}
	j.names[m.Service] = published{port: m.Port, owner: c}
	s.saveSoon(j)
	s.log.Info("name published", "job", j.id, "rank", c.rank, "service", m.Service, "port", m.Port)
	s.answer(c, &Name{Op: TypePublish, Service: m.Service})
	waiting := j.waiting[m.Service]
	if len(waiting) == 0 {
		return nil
	}
	delete(j.waiting, m.Service)
	found := &Name{Op: TypeLookup, Service: m.Service, Port: m.Port}
	for _, w := range waiting {
		w.waits--
		s.answer(w, found)
	}
	return nil
}

// unpublish takes c's rank's Unpublish: any rank of the job may remove
// any of its names; a service not published is name-unknown.
func (s *Server) unpublish(c *conn, m *Unpublish) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil {
		return &Error{Code: CodeProtocol, Message: "unpublish before join"}
	}
	if j.members[c.rank] != c {
		return nil
	}
	if _, ok := j.names[m.Service]; !ok {
		s.answer(c, &Name{Op: TypeUnpublish, Service: m.Service, Code: CodeNameUnknown, Message: "the service is not published"})
		return nil
	}
	delete(j.names, m.Service)
	s.saveSoon(j)
	s.log.Info("name unpublished", "job", j.id, "rank", c.rank, "service", m.Service)
	s.answer(c, &Name{Op: TypeUnpublish, Service: m.Service})
	return nil
}

// lookup takes c's rank's Lookup: a published service's port, else
// name-unknown, or with Wait the lookup is parked in the job until a
// Publish of the service answers it (publish) or c leaves (forget), at
// most MaxWaitingLookups per connection (name-limit past them).
func (s *Server) lookup(c *conn, m *Lookup) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil {
		return &Error{Code: CodeProtocol, Message: "lookup before join"}
	}
	if j.members[c.rank] != c {
		return nil
	}
	switch p, ok := j.names[m.Service]; {
	case ok:
		s.answer(c, &Name{Op: TypeLookup, Service: m.Service, Port: p.port})
	case !m.Wait:
		s.answer(c, &Name{Op: TypeLookup, Service: m.Service, Code: CodeNameUnknown, Message: "the service is not published"})
	case c.waits >= MaxWaitingLookups:
		s.answer(c, &Name{Op: TypeLookup, Service: m.Service, Code: CodeNameLimit,
			Message: fmt.Sprintf("%d lookups wait on this connection already, the most it may park", MaxWaitingLookups)})
	default:
		if j.waiting == nil {
			j.waiting = make(map[string][]*conn)
		}
		j.waiting[m.Service] = append(j.waiting[m.Service], c)
		c.waits++
	}
	return nil
}

// answer sends c the Name that answers one of its requests, and counts
// it.
func (s *Server) answer(c *conn, n *Name) {
	s.nameAnswers.Add(1)
	c.send(n)
}

// forget removes what c held in j's name service when its rank leaves
// the job, for whatever reason: the services it published (its ports die
// with it) and the lookups it parked. Lookups parked for its services
// wait on, for another rank to publish them. Server.mu is held.
func (s *Server) forget(j *job, c *conn) {
	removed := 0
	for service, p := range j.names {
		if p.owner == c {
			delete(j.names, service)
			removed++
		}
	}
	if removed > 0 {
		s.log.Info("names removed with their rank", "job", j.id, "rank", c.rank, "names", removed)
	}
	if c.waits == 0 {
		return
	}
	for service, waiting := range j.waiting {
		if waiting = slices.DeleteFunc(waiting, func(w *conn) bool { return w == c }); len(waiting) == 0 {
			delete(j.waiting, service)
		} else {
			j.waiting[service] = waiting
		}
	}
	c.waits = 0
}

// declareFrozen declares c's rank failed when it stopped answering pings
// in a formed job, and reports whether it did; a connection of a job
// still forming is dropped as before (its departure fails a seated job).
func (s *Server) declareFrozen(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil || !j.started || s.closed || j.members[c.rank] != c {
		return false
	}
	s.declare(j, c, fmt.Sprintf("no answer to pings within %v", s.cfg.PingTimeout))
	return true
}

// declare makes x's rank failed for good (fail-stop): the job's other
// ranks hear it left, as of any departure, with why; x gets
// error{declared-failed} and a close, so a rank that is only frozen, or
// cut off from its peers, ends with that error when it comes back
// instead of carrying on without them; and its seat refuses it (join).
// Server.mu is held.
func (s *Server) declare(j *job, x *conn, why string) {
	why = truncate(why)
	if j.failed == nil {
		j.failed = make(map[int]string)
	}
	j.failed[x.rank] = why
	s.declared.Add(1)
	s.log.Info("rank declared failed", "job", j.id, "rank", x.rank, "why", why)
	x.kill(&Error{Code: CodeDeclaredFailed, Message: truncate(fmt.Sprintf("rank %d was declared failed: %s", x.rank, why))}, false)
	s.depart(j, x, Departure{Job: j.id, Rank: x.rank, Reason: truncate("declared failed: " + why), Declared: true})
}

func (s *Server) path(c *conn, m *Path) *Error {
	s.mu.Lock()
	j := c.job
	size := 0
	if j != nil {
		size = len(j.members)
	}
	s.mu.Unlock()
	switch {
	case j == nil:
		return &Error{Code: CodeProtocol, Message: "path before join"}
	case m.Peer >= size || m.Peer == c.rank:
		s.countRejected(CodeBadRank)
		c.send(&Error{Code: CodeBadRank, Message: fmt.Sprintf("path to rank %d in a job of size %d from rank %d", m.Peer, size, c.rank)})
		return nil
	}
	kind := "direct"
	switch {
	case m.Relayed():
		kind = "relay"
	case m.Local == m.Remote && (m.Local == "memory" || m.Local == "shm" || m.Local == "unix"):
		kind = m.Local // a same-host link: no WebRTC
	}
	s.statsMu.Lock()
	s.paths[kind]++
	s.statsMu.Unlock()
	s.log.Info("link path", "job", j.id, "rank", c.rank, "peer", m.Peer, "local", m.Local, "remote", m.Remote, "rtt_us", m.RTTMicros)
	return nil
}

// leave removes c from its job and tells the ranks that need to know.
//
// Before the job forms, a departure fails a seated job (its seats belong
// to processes a launcher started, and one of them is gone) and frees the
// seat of an open one. After it forms, the first departure goes to every
// rank at once: the job's failure notice. Later ones are batched
// (departureBatch): every member hears of every departure, including a
// rank waiting to receive from the departed one with no link to it, which
// nothing else would tell. So a job's N departures cost N messages per
// batch, where telling every rank of each departure cost N²/2.
func (s *Server) leave(c *conn, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.job
	if j == nil || j.members[c.rank] != c {
		return // never joined, or declared failed (declare announced it)
	}
	reason, clean := "connection closed", websocket.CloseStatus(cause) == websocket.StatusNormalClosure
	switch {
	case c.unresponsive.Load():
		reason, clean = "no answer to pings", false
	case c.isKilled() && c.killErr != nil: // killErr is set before killed closes
		reason, clean = string(c.killErr.Code), false
	case c.wire == nil:
		reason, clean = cause.Error(), false // a seat that waited for its rank to resume
	case !clean:
		// a rank that finalizes closes its connection cleanly: this
		// one's process ended without Finalize, crashed, or lost its
		// network, which the others' errors should say in these words
		reason = "connection lost: its process ended without Finalize, crashed, or lost its network"
	}
	if c.abort != nil {
		reason = abortReason(c.abort)
	}
	s.log.Info("rank left", "job", j.id, "rank", c.rank, "reason", reason, "err", cause)
	s.depart(j, c, Departure{Job: j.id, Rank: c.rank, Reason: reason, Clean: clean})
}

// depart removes c from j and tells the ranks that need to know (see
// leave). Server.mu is held.
func (s *Server) depart(j *job, c *conn, d Departure) {
	j.members[c.rank] = nil
	if c.grace != nil {
		c.grace.Stop()
	}
	s.saveSoon(j)
	d.Late = c.rank >= j.claims.Size
	j.present--
	reason := d.Reason
	s.departed.Add(1)
	s.forget(j, c)
	if t := j.suspects[c.rank]; t != nil {
		t.Stop()
		delete(j.suspects, c.rank)
	}
	state, code, why := RankFailed, 0, reason
	switch {
	case c.abort != nil:
		state, code = RankAborted, c.abort.Code
	case !j.started && !j.seated():
		state = RankLeft // a volunteer's seat is free again
	case j.started && c.leaving:
		// it said it finalizes (Leaving): finished, even if its process
		// ended before its connection's closing handshake did
		state = RankFinalized
	case j.started && d.Clean:
		// closed cleanly without saying it finalizes: its program ended
		// without Finalize (a failed rank whose library left the job)
		why = "left without Finalize: its program ended or failed"
	}
	s.leftRank(j, c.rank, state, why, code)
	if s.closed {
		if j.present == 0 {
			delete(s.jobs, j.id)
			s.forgetTele(j.id)
		}
		return // everyone is told the server is shutting down
	}
	if s.leaveHook != nil {
		defer s.leaveHook()
	}
	if !j.started {
		if j.seated() {
			s.failJob(j, fmt.Sprintf("rank %d left before the job formed (%s)", c.rank, reason))
			return
		}
		s.broadcast(&Left{Rank: c.rank, Reason: reason}, j.members)
		if j.present == 0 {
			delete(s.jobs, j.id) // an open job nobody waits in: volunteers may form it afresh
			s.forgetTele(j.id)
		}
		return
	}
	j.departed++
	if s.cfg.Departed != nil {
		d.At = time.Now()
		s.cfg.Departed(d)
	}
	switch {
	case c.abort != nil: // announced when the abort came (Server.abort)
	case j.departed == 1:
		s.broadcast(&Left{Rank: c.rank, Reason: reason}, j.members)
	default:
		s.queueDeparture(j, c.rank)
	}
	if j.present == 0 {
		if j.flush != nil {
			j.flush.Stop()
			j.flush, j.pending = nil, nil
		}
		delete(s.jobs, j.id)
		s.jobState(j, JobOver, "")
		s.bury(j, CodeJobEnded, fmt.Sprintf("job %s formed and every rank has left", j.id))
	}
}

// queueDeparture adds rank to j's next batched notice, opening a batch if
// none is open. Server.mu is held.
func (s *Server) queueDeparture(j *job, rank int) {
	j.pending = append(j.pending, rank)
	if j.flush != nil {
		return
	}
	if j.window == 0 {
		j.window = departureBatch
	}
	j.flush = time.AfterFunc(j.window, func() { s.flushDepartures(j) })
}

// flushDepartures sends j's batched departures to every member still
// present, in one notice, and lengthens the next batch's wait.
func (s *Server) flushDepartures(j *job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j.flush = nil
	if len(j.pending) == 0 || s.closed {
		return
	}
	l := &Left{Rank: j.pending[0]} // no reason: each rank had its own
	if len(j.pending) > 1 {
		l.Also = slices.Clone(j.pending[1:])
	}
	j.pending = j.pending[:0]
	j.window = min(2*j.window, maxDepartureBatch)
	s.broadcast(l, j.members)
}

// FailSeat fails the job of a seat token whose rank will never join: its
// process ended before it reached the server. A launcher that embeds the
// server and holds the token calls it, so the job fails for every member
// and later joiner at once instead of at their join timeout. It does
// nothing and returns false when the seat's rank has joined, or the job
// formed or is over already: then the server knows what happened.
func (s *Server) FailSeat(jobID, token, why string) (bool, error) {
	now := time.Now()
	claims, err := VerifyToken(s.cfg.Secret, token, jobID, now)
	if err != nil {
		return false, fmt.Errorf("fail seat: %w", err)
	}
	if claims.Seat == nil {
		return false, fmt.Errorf("fail seat: an open token names no seat: %w", ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.ended[claims.Job]; ok && now.Unix() < g.expires {
		return false, nil
	}
	why = fmt.Sprintf("rank %d left before the job formed (%s)", *claims.Seat, why)
	j := s.jobs[claims.Job]
	switch {
	case j == nil: // nobody joined yet: remember the failure for those who will
		s.failedJobs.Add(1)
		s.log.Info("job failed", "job", claims.Job, "why", why)
		s.bury(&job{id: claims.Job, expires: claims.Expires}, CodeJobFailed, why)
		return true, nil
	case j.started || j.members[*claims.Seat] != nil || !j.claims.sameWorld(claims):
		return false, nil
	}
	j.expires = max(j.expires, claims.Expires)
	s.failJob(j, why)
	return true, nil
}

// failJob ends a job that will not form: every member gets the error
// and a close, and the job is remembered so that later joiners get it too.
// Server.mu is held.
func (s *Server) failJob(j *job, why string) {
	s.failedJobs.Add(1)
	s.log.Info("job failed", "job", j.id, "why", why)
	e := &Error{Code: CodeJobFailed, Message: why}
	for r, mem := range j.members {
		if mem != nil {
			j.members[r] = nil
			mem.kill(e, false)
			s.leftRank(j, r, RankLeft, why, 0)
		}
	}
	j.present = 0
	delete(s.jobs, j.id)
	s.saveSoon(j)
	s.jobState(j, JobFailed, why)
	s.bury(j, CodeJobFailed, why)
}

// bury remembers a job that is over until its tokens expire, at most
// Config.MaxEndedJobs of them (the oldest go first). Server.mu is held.
func (s *Server) bury(j *job, code ErrorCode, why string) {
	now := time.Now().Unix()
	if j.expires <= now {
		s.forgetTele(j.id)
		return // no token can reach it any more
	}
	for len(s.ended) >= s.cfg.MaxEndedJobs && len(s.graves) > 0 {
		g := s.graves[0]
		s.graves = s.graves[1:]
		if cur, ok := s.ended[g.id]; ok && cur.seq == g.seq {
			delete(s.ended, g.id)
			if s.jobs[g.id] == nil {
				s.forgetTele(g.id)
			}
		}
	}
	if len(s.graves) > 2*len(s.ended)+64 {
		// drop the references to graves already gone (expired and
		// deleted at a join, or replaced), so the list stays O(ended)
		kept := make([]graveRef, 0, len(s.ended)+1)
		for _, g := range s.graves {
			if cur, ok := s.ended[g.id]; ok && cur.seq == g.seq {
				kept = append(kept, g)
			}
		}
		s.graves = kept
	}
	s.graveSeq++
	s.ended[j.id] = grave{code: code, why: why, expires: j.expires, seq: s.graveSeq}
	s.graves = append(s.graves, graveRef{id: j.id, seq: s.graveSeq})
}
