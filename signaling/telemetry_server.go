//go:build !js

package signaling

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"
)

// The server's record of each job for dashboards (see Views in the
// package doc): the ranks' states, their links and console tails, and a
// bounded ring of events (rank state changes, the ranks' telemetry) that
// viewers follow with Events.

// Job states in JobView.State and in a "job" Event.
const (
	JobForming = "forming" // waiting for its Size ranks
	JobFormed  = "formed"  // Ready sent: running
	JobOver    = "over"    // formed, and every rank has left
	JobFailed  = "failed"  // a rank of a seated job left before it formed
	JobEnded   = "ended"   // ended by Server.EndJob
)

// Rank states in RankView.State.
const (
	RankJoined    = "joined"    // present, the job not formed yet
	RankReady     = "ready"     // present in the formed job
	RankFinalized = "finalized" // left the formed job after saying it finalizes (Leaving)
	RankFailed    = "failed"    // left the formed job without Finalize (crashed, or its program failed), or was declared failed
	RankAborted   = "aborted"   // called Abort (RankView.Code)
	RankLeft      = "left"      // left before the job formed, or was sent away (the job failed or ended)
)

// Event kinds in Event.Kind.
const (
	EventRank    = "rank"    // a rank's state changed: Rank, RankView
	EventOp      = "op"      // a rank completed an operation: Rank, Op
	EventLink    = "link"    // a rank's link changed: Rank, Link
	EventConsole = "console" // a rank wrote a line: Rank, Console
	EventJob     = "job"     // the job's state changed: State
	EventGap     = "gap"     // events after the viewer's cursor were overwritten: read View again
)

// JobView is a job as the server sees it now, for dashboards.
type JobView struct {
	Job string `json:"job"`
	// Size is the job's world; Max the most ranks it may grow to (Size
	// when it cannot grow).
	Size    int    `json:"size"`
	Max     int    `json:"max"`
	State   string `json:"state"` // JobForming, JobFormed, JobOver, JobFailed or JobEnded
	Present int    `json:"present"`
	// Reason says why the job failed or ended.
	Reason string     `json:"reason,omitempty"`
	Ranks  []RankView `json:"ranks"`
	Links  []LinkView `json:"links"`
	// Seq is the last event the view includes: follow it with Events(job,
	// Seq, …).
	Seq uint64 `json:"seq"`
	// Dropped counts the operations not recorded: dropped by the ranks
	// (Telemetry.Dropped) or by the server over its bounds.
	Dropped int64 `json:"dropped"`
}

// RankView is one rank of a JobView.
type RankView struct {
	Rank  int        `json:"rank"`
	Kind  ClientKind `json:"kind"`
	Agent string     `json:"agent,omitempty"`
	// State is RankJoined, RankReady, RankFinalized, RankFailed,
	// RankAborted or RankLeft.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Code   int    `json:"code,omitempty"` // the code the rank called Abort with
	Joined int64  `json:"joined"`         // unix ms
	Left   int64  `json:"left,omitempty"` // unix ms, 0 while present
	// Console is the rank's last lines, at most Config.ConsoleTail (in
	// a View; nil in an Event and in Jobs).
	Console []ConsoleLine `json:"console,omitempty"`
}

// LinkView is a rank's link to a peer as the rank last reported it.
type LinkView struct {
	From      int    `json:"from"`
	To        int    `json:"to"`
	Local     string `json:"local,omitempty"`
	Remote    string `json:"remote,omitempty"`
	RTTMicros int    `json:"rttMicros,omitempty"`
	Sent      int64  `json:"sent"`
	Received  int64  `json:"received"`
	Updated   int64  `json:"updated"` // unix ms of the report
}

// Event is one entry of a job's event ring. Its pointers are shared with
// the server and other viewers: read them, never write them.
type Event struct {
	Seq      uint64       `json:"seq"`
	Time     int64        `json:"time"` // server unix µs
	Kind     string       `json:"kind"` // EventRank, EventOp, EventLink, EventConsole, EventJob or EventGap
	Rank     int          `json:"rank"`
	Op       *OpEvent     `json:"op,omitempty"` // times on the server's clock
	Link     *LinkView    `json:"link,omitempty"`
	Console  *ConsoleLine `json:"console,omitempty"`
	RankView *RankView    `json:"rankView,omitempty"`
	State    string       `json:"state,omitempty"` // the job's state, of a job event
}

// linkEventInterval is how often a link's report becomes an event at
// most, unless its path changed: every rank reports every link each
// interval, and the view holds the latest anyway. A variable for tests.
var linkEventInterval = time.Second

// maxViewLinks bounds the links a job's view holds (a 128-rank full
// mesh); reports of further links are ignored. A variable for tests.
var maxViewLinks = 128 * 127

// defaultEventsBuf is how many events Events returns for an empty buf.
const defaultEventsBuf = 256

// Approximate memory of the records, for the byte bounds.
const (
	eventBytes   = 112 // an Event in the ring
	opBytes      = 80  // an OpEvent
	lineBytes    = 48  // a ConsoleLine, beside its text
	linkBytes    = 160 // a LinkView with its map entry
	rankBytes    = 200 // a RankView snapshot
	teleJobBytes = 512 // a jobTele
)

// jobTele is a job's record for viewers. Its fields are guarded by mu,
// which is taken after Server.mu when both are held.
type jobTele struct {
	mu      sync.Mutex
	id      string
	size    int
	limit   int
	state   string
	reason  string
	present int
	ranks   []rankTele
	links   map[[2]int]*linkTele

	ring  []Event // a circular buffer, grown up to Config.TelemetryEvents
	head  int     // index of the oldest event
	n     int     // events held
	first uint64  // seq of the oldest event held, when n > 0
	last  uint64  // seq of the newest event ever pushed
	wake  chan struct{}

	bytes   int64 // ring, console tails, links, ranks (approximate)
	dropped int64
	gone    bool // forgotten by the server: Events and View fail
}

type rankTele struct {
	view      RankView
	tail      []ConsoleLine // a ring of Config.ConsoleTail lines
	tailHead  int
	tailBytes int64
}

type linkTele struct {
	view      LinkView
	lastEvent time.Time
}

// tele returns j's record, making it at the job's first event. Server.mu
// is held.
func (s *Server) tele(j *job) *jobTele {
	if j.tele != nil {
		return j.tele
	}
	if old := s.teles[j.id]; old != nil {
		s.dropTele(old) // an earlier job of the same id, over
	}
	t := &jobTele{id: j.id, size: j.claims.Size, limit: j.claims.Limit(), state: JobForming, wake: make(chan struct{})}
	t.addBytes(s, teleJobBytes)
	j.tele = t
	s.teles[j.id] = t
	return t
}

// forgetTele drops the record of job id, if the server keeps one, when it
// forgets the job. Server.mu is held.
func (s *Server) forgetTele(id string) {
	if t := s.teles[id]; t != nil {
		s.dropTele(t)
	}
}

// dropTele frees t and wakes its viewers, who find it gone. Server.mu is
// held.
func (s *Server) dropTele(t *jobTele) {
	if s.teles[t.id] == t {
		delete(s.teles, t.id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return
	}
	t.gone = true
	s.teleBytes.Add(-t.bytes)
	t.bytes = 0
	t.ring, t.ranks, t.links = nil, nil, nil
	close(t.wake)
}

// addBytes counts n bytes more (or fewer) in t and in the server's
// total. t.mu is held, or t is not shared yet.
func (t *jobTele) addBytes(s *Server, n int64) {
	t.bytes += n
	s.teleBytes.Add(n)
}

// rank returns rank r's record, growing the table for a late rank. t.mu
// is held.
func (t *jobTele) rank(s *Server, r int) *rankTele {
	for len(t.ranks) <= r {
		t.ranks = append(t.ranks, rankTele{view: RankView{Rank: len(t.ranks)}})
		t.addBytes(s, rankBytes)
	}
	return &t.ranks[r]
}

// push appends events to t's ring, dropping the oldest past the bounds,
// and wakes the viewers. t.mu is held.
func (t *jobTele) push(s *Server, now int64, evs ...Event) {
	if t.gone || len(evs) == 0 {
		return
	}
	for _, e := range evs {
		cost := eventCost(&e)
		if t.n == s.cfg.TelemetryEvents {
			t.dropOldest(s)
		}
		if !t.makeRoom(s, cost) {
			t.dropped++ // over the bounds with an empty ring: lost (a gap for the viewers)
			continue
		}
		t.last++
		e.Seq, e.Time = t.last, now
		if t.n == 0 {
			t.first = e.Seq
		}
		if t.n == len(t.ring) {
			t.grow(s.cfg.TelemetryEvents)
		}
		t.ring[(t.head+t.n)%len(t.ring)] = e
		t.n++
		t.addBytes(s, cost)
	}
	close(t.wake)
	t.wake = make(chan struct{})
}

// grow makes room for one more event in the full ring: twice as long, up
// to limit, the oldest first. t.mu is held.
func (t *jobTele) grow(limit int) {
	ring := make([]Event, min(max(2*len(t.ring), 64), limit))
	k := copy(ring, t.ring[t.head:])
	copy(ring[k:], t.ring[:t.head])
	t.ring, t.head = ring, 0
}

// makeRoom drops the ring's oldest events until cost more bytes fit the
// job's and the server's bounds, and reports whether they do. t.mu is
// held.
func (t *jobTele) makeRoom(s *Server, cost int64) bool {
	over := func() bool {
		return t.bytes+cost > int64(s.cfg.TelemetryBytes) || s.teleBytes.Load()+cost > int64(s.cfg.TelemetryTotalBytes)
	}
	for t.n > 0 && over() {
		t.dropOldest(s)
	}
	return !over()
}

// dropOldest removes the ring's oldest event. t.mu is held.
func (t *jobTele) dropOldest(s *Server) {
	e := &t.ring[t.head]
	t.addBytes(s, -eventCost(e))
	*e = Event{}
	t.first++
	t.n--
	t.head = (t.head + 1) % len(t.ring)
}

// at returns the event with sequence number seq, which the ring holds.
// t.mu is held.
func (t *jobTele) at(seq uint64) *Event {
	return &t.ring[(t.head+int(seq-t.first))%len(t.ring)]
}

func eventCost(e *Event) int64 {
	n := int64(eventBytes)
	if e.Op != nil {
		n += opBytes + int64(len(e.Op.Op)+len(e.Op.Comm)+len(e.Op.Err))
	}
	if e.Console != nil {
		n += lineBytes + int64(len(e.Console.Text))
	}
	if e.Link != nil {
		n += linkBytes
	}
	if e.RankView != nil {
		n += rankBytes + int64(len(e.RankView.Agent)+len(e.RankView.Reason))
	}
	return n
}

// rankState records that rank r of j is now in state (with a reason and
// an abort code), as an event. Server.mu is held.
func (s *Server) rankState(j *job, r int, state, reason string, code int) {
	t := s.tele(j)
	t.mu.Lock()
	defer t.mu.Unlock()
	s.setRank(t, r, state, reason, code, time.Now())
}

// setRank is rankState with t.mu held.
func (s *Server) setRank(t *jobTele, r int, state, reason string, code int, now time.Time) {
	if t.gone {
		return
	}
	rt := t.rank(s, r)
	v := &rt.view
	v.State, v.Reason, v.Code = state, reason, code
	switch state {
	case RankJoined, RankReady:
		if v.Joined == 0 || v.Left != 0 {
			v.Joined, v.Left = now.UnixMilli(), 0
		}
	default:
		if v.Left == 0 {
			v.Left = now.UnixMilli()
		}
	}
	snap := *v
	snap.Console = nil
	t.push(s, now.UnixMicro(), Event{Kind: EventRank, Rank: r, RankView: &snap})
}

// joinedRank records a rank's join: its kind and agent, and its state.
// Server.mu is held.
func (s *Server) joinedRank(j *job, r int, kind ClientKind, agent string) {
	t := s.tele(j)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return
	}
	rt := t.rank(s, r)
	if rt.view.Left != 0 {
		// a volunteer takes a freed seat of an open job: a new rank
		t.addBytes(s, -rt.tailBytes)
		*rt = rankTele{view: RankView{Rank: r}}
	}
	t.addBytes(s, -int64(len(rt.view.Agent)))
	rt.view.Kind, rt.view.Agent = kind, agent
	t.addBytes(s, int64(len(agent)))
	t.present++
	state := RankJoined
	if j.started {
		state = RankReady // a late rank: it gets Ready at once
	}
	s.setRank(t, r, state, "", 0, time.Now())
}

// leftRank records a rank's departure. Server.mu is held.
func (s *Server) leftRank(j *job, r int, state, reason string, code int) {
	t := s.tele(j)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return
	}
	t.present--
	s.setRank(t, r, state, reason, code, time.Now())
}

// jobState records j's new state as an event; a job that formed makes its
// ranks ready. Server.mu is held.
func (s *Server) jobState(j *job, state, reason string) {
	t := s.tele(j)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return
	}
	now := time.Now()
	t.state, t.reason = state, reason
	t.push(s, now.UnixMicro(), Event{Kind: EventJob, Rank: -1, State: state})
	if state == JobFormed {
		for r := range t.ranks {
			if t.ranks[r].view.State == RankJoined {
				s.setRank(t, r, RankReady, "", 0, now)
			}
		}
	}
}

// telemetry takes a rank's report: its operations, shifted onto the
// server's clock, its links and its console lines, into the job's record.
func (s *Server) telemetry(c *conn, m *Telemetry) *Error {
	recv := time.Now()
	s.mu.Lock()
	j := c.job
	if j == nil {
		s.mu.Unlock()
		return &Error{Code: CodeProtocol, Message: "telemetry before join"}
	}
	if j.members[c.rank] != c || j.tele == nil {
		s.mu.Unlock()
		return nil // gone: the job failed or ended, or the rank was declared failed
	}
	t, rank := j.tele, c.rank
	if s.teleBytes.Load() > int64(s.cfg.TelemetryTotalBytes)*7/8 && recv.Sub(s.teleFreed) >= time.Second {
		s.teleFreed = recv // a scan of the ended jobs at most once a second
		s.freeEndedTele()
	}
	s.mu.Unlock()

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return nil
	}
	offset := recv.UnixMicro() - m.Now
	t.dropped += int64(m.Dropped)
	evs := make([]Event, 0, len(m.Ops)+len(m.Links)+len(m.Console))
	for i := range m.Ops {
		op := &m.Ops[i]
		op.Start += offset
		op.End += offset
		evs = append(evs, Event{Kind: EventOp, Rank: rank, Op: op})
	}
	rt := t.rank(s, rank)
	for i := range m.Console {
		line := &m.Console[i]
		s.tailLine(t, rt, *line)
		evs = append(evs, Event{Kind: EventConsole, Rank: rank, Console: line})
	}
	for _, l := range m.Links {
		if l.Peer >= t.limit || l.Peer == rank {
			continue
		}
		if ev, ok := s.updateLink(t, rank, l, recv); ok {
			evs = append(evs, ev)
		}
	}
	t.push(s, recv.UnixMicro(), evs...)
	return nil
}

// tailLine adds line to rank's console tail. t.mu is held.
func (s *Server) tailLine(t *jobTele, rt *rankTele, line ConsoleLine) {
	cost := lineBytes + int64(len(line.Text))
	if s.cfg.ConsoleTail == 0 {
		return
	}
	if len(rt.tail) < s.cfg.ConsoleTail {
		if !t.makeRoom(s, cost) {
			t.dropped++
			return
		}
		rt.tail = append(rt.tail, line)
		rt.tailBytes += cost
		t.addBytes(s, cost)
		return
	}
	old := &rt.tail[rt.tailHead]
	delta := cost - (lineBytes + int64(len(old.Text)))
	if delta > 0 && !t.makeRoom(s, delta) {
		t.dropped++
		return
	}
	*old = line
	rt.tailHead = (rt.tailHead + 1) % len(rt.tail)
	rt.tailBytes += delta
	t.addBytes(s, delta)
}

// updateLink records rank's report of its link to l.Peer and returns the
// event to push, if the link is new, its path changed, or its last event
// is linkEventInterval old. t.mu is held.
func (s *Server) updateLink(t *jobTele, rank int, l LinkStat, now time.Time) (Event, bool) {
	key := [2]int{rank, l.Peer}
	lt := t.links[key]
	if lt == nil {
		if len(t.links) >= maxViewLinks {
			return Event{}, false
		}
		if t.links == nil {
			t.links = make(map[[2]int]*linkTele)
		}
		lt = &linkTele{}
		t.links[key] = lt
		t.addBytes(s, linkBytes)
	}
	changed := lt.view.Local != l.Local || lt.view.Remote != l.Remote || lt.lastEvent.IsZero()
	lt.view = LinkView{From: rank, To: l.Peer, Local: l.Local, Remote: l.Remote, RTTMicros: l.RTTMicros,
		Sent: l.Sent, Received: l.Received, Updated: now.UnixMilli()}
	if !changed && now.Sub(lt.lastEvent) < linkEventInterval {
		return Event{}, false
	}
	lt.lastEvent = now
	v := lt.view
	return Event{Kind: EventLink, Rank: rank, Link: &v}, true
}

// freeEndedTele frees the event rings and console tails of jobs that are
// over, the oldest first, until the records are back under 3/4 of
// Config.TelemetryTotalBytes or no ended job holds any: live jobs come
// first. Their ranks' states stay. Server.mu is held.
func (s *Server) freeEndedTele() {
	target := int64(s.cfg.TelemetryTotalBytes) * 3 / 4
	for _, g := range s.graves {
		if s.teleBytes.Load() <= target {
			return
		}
		cur, ok := s.ended[g.id]
		t := s.teles[g.id]
		if !ok || cur.seq != g.seq || t == nil || s.jobs[g.id] != nil && s.jobs[g.id].tele == t {
			continue
		}
		t.mu.Lock()
		for t.n > 0 {
			t.dropOldest(s)
		}
		t.ring, t.head = nil, 0
		for i := range t.ranks {
			rt := &t.ranks[i]
			t.addBytes(s, -rt.tailBytes)
			rt.tail, rt.tailHead, rt.tailBytes = nil, 0, 0
		}
		t.mu.Unlock()
	}
}

// lookupTele returns the record of job id.
func (s *Server) lookupTele(id string) *jobTele {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.teles[id]
}

// View returns job as the server sees it now: its state, its ranks with
// their console tails, its links, and the seq of the last event it
// includes, from which Events follows it. ok is false for a job the
// server does not know (no rank joined it, or it was forgotten).
func (s *Server) View(job string) (v JobView, ok bool) {
	t := s.lookupTele(job)
	if t == nil {
		return JobView{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return JobView{}, false
	}
	v = t.summary()
	for i := range v.Ranks {
		rt := &t.ranks[i]
		if len(rt.tail) == 0 {
			continue
		}
		lines := make([]ConsoleLine, 0, len(rt.tail))
		lines = append(lines, rt.tail[rt.tailHead:]...)
		v.Ranks[i].Console = append(lines, rt.tail[:rt.tailHead]...)
	}
	v.Links = make([]LinkView, 0, len(t.links))
	for _, l := range t.links {
		v.Links = append(v.Links, l.view)
	}
	slices.SortFunc(v.Links, func(a, b LinkView) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) })
	return v, true
}

// summary is t's view without consoles and links. t.mu is held.
func (t *jobTele) summary() JobView {
	v := JobView{Job: t.id, Size: t.size, Max: t.limit, State: t.state, Reason: t.reason, Present: t.present,
		Seq: t.last, Dropped: t.dropped, Ranks: make([]RankView, len(t.ranks))}
	for i := range t.ranks {
		v.Ranks[i] = t.ranks[i].view
	}
	return v
}

// Jobs returns the summaries (no consoles, no links) of the jobs the
// server holds a record of, forming, formed or over, by id.
func (s *Server) Jobs() []JobView {
	s.mu.Lock()
	teles := make([]*jobTele, 0, len(s.teles))
	for _, t := range s.teles {
		teles = append(teles, t)
	}
	s.mu.Unlock()
	out := make([]JobView, 0, len(teles))
	for _, t := range teles {
		t.mu.Lock()
		if !t.gone {
			out = append(out, t.summary())
		}
		t.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b JobView) int { return cmp.Compare(a.Job, b.Job) })
	return out
}

// Events returns job's events after seq after, at most len(buf) of them
// (defaultEventsBuf for an empty buf), appended to buf[:0]; the seq to
// ask after next; and a channel closed when a newer event arrives (or
// the job is forgotten). If events after after were overwritten by the
// bounded ring (or after is not of this job's record: the server forgot
// the job and a new one took its id), the first event returned is a
// gap, EventGap: the viewer reads View again and follows from its Seq.
// ok is false for a job the server does not know.
func (s *Server) Events(job string, after uint64, buf []Event) (evs []Event, next uint64, wake <-chan struct{}, ok bool) {
	t := s.lookupTele(job)
	if t == nil {
		return buf[:0], after, nil, false
	}
	limit := len(buf)
	if limit == 0 {
		limit = defaultEventsBuf
	}
	evs = buf[:0]
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return evs, after, nil, false
	}
	next = after
	from := after + 1
	if after > t.last || after < t.last && (t.n == 0 || from < t.first) {
		// overwritten or dropped, or a cursor of an earlier record
		if t.n == 0 {
			evs = append(evs, Event{Kind: EventGap, Rank: -1, Seq: t.last, Time: time.Now().UnixMicro()})
			return evs, t.last, t.wake, true
		}
		from = t.first
		next = from - 1
		evs = append(evs, Event{Kind: EventGap, Rank: -1, Seq: next, Time: time.Now().UnixMicro()})
	}
	for seq := from; seq <= t.last && len(evs) < limit; seq++ {
		evs = append(evs, *t.at(seq))
		next = seq
	}
	return evs, next, t.wake, true
}

// EndJob ends job: every member gets error{job-ended, reason} and a close,
// and the job is remembered as ended (a later join gets job-ended) until
// its tokens expire, or for Config.MaxTokenTTL if no rank joined it. A job
// that is over already stays as it ended. Its errors wrap ErrInvalid (a
// malformed job id).
func (s *Server) EndJob(id, reason string) error {
	if err := validJobID(id); err != nil {
		return fmt.Errorf("end job %q: %w", id, err)
	}
	why := fmt.Sprintf("job %s was ended", id)
	if reason != "" {
		why += ": " + reason
	}
	why = truncate(why)
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		if _, over := s.ended[id]; over {
			return nil
		}
		s.bury(&job{id: id, expires: time.Now().Add(s.cfg.MaxTokenTTL).Unix()}, CodeJobEnded, why)
		return nil
	}
	s.log.Info("job ended", "job", id, "why", why)
	e := &Error{Code: CodeJobEnded, Message: why}
	for r, mem := range j.members {
		if mem == nil {
			continue
		}
		j.members[r] = nil
		s.forget(j, mem)
		if t := j.suspects[r]; t != nil {
			t.Stop()
			delete(j.suspects, r)
		}
		mem.kill(e, false)
		s.leftRank(j, r, RankLeft, why, 0)
	}
	if j.flush != nil {
		j.flush.Stop()
		j.flush, j.pending = nil, nil
	}
	j.present = 0
	delete(s.jobs, id)
	s.jobState(j, JobEnded, why)
	j.expires = max(j.expires, time.Now().Add(time.Minute).Unix()) // remembered, however close its tokens' expiry
	s.bury(j, CodeJobEnded, why)
	return nil
}
