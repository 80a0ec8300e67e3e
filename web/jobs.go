//go:build !js

package web

import (
	"compress/gzip"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
)

// JobsConfig configures the organizer's job registry (NewJobs): the jobs
// page, invites, the join, dashboard and pool pages and their API.
type JobsConfig struct {
	// Secret is the signaling server's token secret: the registry mints
	// the jobs' seat and late tokens with it.
	Secret []byte
	// Password and AdminKey each log an organizer in (either is
	// accepted; AdminKey also as "Authorization: Bearer KEY" on the
	// API). With neither, only clients on the server's own machine
	// (loopback, asking by an IP address, localhost or one of Hosts) may
	// organize.
	Password, AdminKey string
	// PublicURL is the scheme://host[:port] invites, QR codes and
	// dashboard links name; empty: the request's own (its TLS and Host).
	PublicURL string
	// Hosts are names the server is reached by besides IP addresses and
	// localhost (for the loopback organizer; cmd/signal's -public-name).
	Hosts []string
	// Loopback gives jobs the setting net=loopback (every rank on the
	// server's machine); else net=lan.
	Loopback bool
	// Secure marks the session cookie Secure whatever the request (set
	// it behind a TLS-terminating proxy); a request over TLS gets a
	// Secure cookie anyway.
	Secure bool

	MaxUpload   int64         // bytes of one uploaded .wasm, default 64 MiB
	MaxStored   int64         // bytes of uploads held at once, default 16 × MaxUpload
	MaxJobs     int           // jobs held (ended ones included), default 100
	MaxSize     int           // largest job (size and max), default and at most signaling.MaxJobSize
	MaxMinutes  int           // longest time limit, default 7 days
	KeepEnded   time.Duration // an ended job stays listed this long, default 1 h
	SessionTTL  time.Duration // organizer session lifetime, default 12 h
	MaxSessions int           // organizer sessions held, default 1000
	// SeatReclaim is how long a seat handed to a tab that never joined
	// stays its own while the job forms; after it, the seat goes to the
	// next joiner. Default 2 min.
	SeatReclaim time.Duration
	// PoolWait is the longest a POST /api/pool waits for a job, default
	// 25 s.
	PoolWait time.Duration
}

func (c JobsConfig) withDefaults() (JobsConfig, error) {
	bad := func(f string, v ...any) (JobsConfig, error) {
		return JobsConfig{}, fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(f, v...))
	}
	if len(c.Secret) < signaling.MinSecretLen {
		return bad("jobs: secret must have at least %d bytes", signaling.MinSecretLen)
	}
	if c.MaxUpload < 0 || c.MaxStored < 0 || c.MaxJobs < 0 || c.MaxSize < 0 || c.MaxMinutes < 0 || c.KeepEnded < 0 ||
		c.SessionTTL < 0 || c.MaxSessions < 0 || c.SeatReclaim < 0 || c.PoolWait < 0 {
		return bad("jobs: negative limit")
	}
	if c.MaxSize > signaling.MaxJobSize {
		return bad("jobs: MaxSize %d above %d", c.MaxSize, signaling.MaxJobSize)
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return bad("public URL %q: want http(s)://host[:port]", c.PublicURL)
		}
		c.PublicURL = u.Scheme + "://" + u.Host
	}
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	defDur := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	if c.MaxUpload == 0 {
		c.MaxUpload = 64 << 20
	}
	if c.MaxStored == 0 {
		c.MaxStored = 16 * c.MaxUpload
	}
	def(&c.MaxJobs, 100)
	def(&c.MaxSize, signaling.MaxJobSize)
	def(&c.MaxMinutes, 7*24*60)
	def(&c.MaxSessions, 1000)
	defDur(&c.KeepEnded, time.Hour)
	defDur(&c.SessionTTL, 12*time.Hour)
	defDur(&c.SeatReclaim, 2*time.Minute)
	defDur(&c.PoolWait, 25*time.Second)
	return c, nil
}

// Jobs is the organizer's job registry: the jobs created on the jobs
// page, their invites, seats, viewer keys, uploads and time limits. It is
// bounded (JobsConfig.MaxJobs jobs, MaxStored bytes of uploads, ended
// jobs forgotten after KeepEnded). A Jobs serves one Handler (Options.Jobs),
// which binds it to the signaling server its jobs run on.
//
// Lock order: the signaling server calls ICEServers under its own lock, so
// Jobs never calls the server while it holds its own.
type Jobs struct {
	cfg    JobsConfig
	public *url.URL // nil: the request's own
	sess   *sessions

	srv      atomic.Pointer[signaling.Server]
	programs map[string]bool // the examples a job may name (set by Handler)

	ice sync.Map // job id → []signaling.ICEServer (read under the server's lock)

	waiting atomic.Int64 // volunteers in POST /api/pool

	// summaries of the server's jobs (no consoles, no links), read at
	// most every summaryAge for the lists, statuses and the pool, which
	// many pages poll
	sumMu sync.Mutex
	sumAt time.Time
	sums  map[string]jobView

	mu      sync.Mutex
	byID    map[string]*uiJob
	invites map[string]*uiJob
	order   []*uiJob      // oldest first
	changed chan struct{} // closed (and replaced) when a job is created or changes
	stored  int64         // upload bytes held
	closed  bool
}

// NewJobs returns an empty registry.
func NewJobs(c JobsConfig) (*Jobs, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	js := &Jobs{cfg: c, sess: newSessions(c.SessionTTL, c.MaxSessions),
		byID: map[string]*uiJob{}, invites: map[string]*uiJob{}, changed: make(chan struct{})}
	if c.PublicURL != "" {
		js.public, _ = url.Parse(c.PublicURL)
	}
	return js, nil
}

// bind ties the registry to the server its jobs run on.
func (js *Jobs) bind(srv *signaling.Server, programs []string) error {
	if srv == nil {
		return fmt.Errorf("%w: Options.Jobs needs Options.Server", ErrConfig)
	}
	if !js.srv.CompareAndSwap(nil, srv) && js.srv.Load() != srv {
		return fmt.Errorf("%w: a Jobs serves one signaling server", ErrConfig)
	}
	js.mu.Lock()
	js.programs = map[string]bool{}
	for _, p := range programs {
		js.programs[p] = true
	}
	js.mu.Unlock()
	return nil
}

// ICEServers returns the ICE servers the organizer gave job (none for a
// job of another kind). cmd/signal adds them to every rank's welcome
// through signaling.Config.ICECredentials. Safe under the server's lock.
func (js *Jobs) ICEServers(job string) []signaling.ICEServer {
	if v, ok := js.ice.Load(job); ok {
		return v.([]signaling.ICEServer)
	}
	return nil
}

// Close stops the registry's time limits and sends the volunteers
// waiting in POST /api/pool away (204: ask again); jobs already running
// go on. cmd/signal closes it as its HTTP server shuts down, which waits
// for the requests under way.
func (js *Jobs) Close() {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.closed = true
	for _, j := range js.order {
		if j.timer != nil {
			j.timer.Stop()
		}
	}
	js.notifyLocked()
}

// notifyLocked wakes the pool's waiters. js.mu is held.
func (js *Jobs) notifyLocked() {
	close(js.changed)
	js.changed = make(chan struct{})
}

// uiJob is a job of the registry.
type uiJob struct {
	id, invite, viewKey string
	// sig is the job's id at the signaling server: id, or id.N after
	// the Nth restart (restarts): a seated job fails when a rank leaves
	// before it formed (a student closed a tab), and the registry then
	// starts it afresh under the same invite.
	sig      string
	restarts int

	example            string // a server program, or "" for an upload
	rankWasm, wasiWasm []byte // uploads, dropped when the job ends
	rankGz             []byte // rankWasm gzipped, for the tabs' downloads
	hasWASI            bool
	args               []string
	size, max          int // max == size: the job cannot grow
	pool               bool
	created, deadline  time.Time
	settings           map[string]string
	ice                []signaling.ICEServer

	seatToks []string    // seatToks[r] admits rank r
	issued   []time.Time // when seat r was handed out; zero: never
	lateTok  string      // the late token, for a job that grows
	lateN    int         // late tokens handed out
	lastLate time.Time
	seats    map[string]int // status seat id → rank (-1: late)

	ended   bool
	reason  string // why it ended
	endedAt time.Time
	state   string // last known state, for the list of an ended job
	timer   *time.Timer
}

// jobRequest is a job as the jobs page asks for it (POST /api/jobs).
type jobRequest struct {
	Example            string
	RankWasm, WASIWasm []byte
	Size, Max          int
	ICE                string
	Minutes            int // 0: 60
	Pool               bool
	Args               string
}

// Bounds of a job request.
const (
	maxJobICE   = 8    // ICE lines of a job
	maxArgs     = 64   // program arguments
	maxArgLen   = 256  // bytes of one argument
	maxArgsLen  = 4096 // bytes of all of them
	maxSeatIDs  = 4096 // status seat ids remembered per job
	wasmMagic   = "\x00asm"
	defaultMins = 60
)

// badJob is an ErrBadJob with words.
func badJob(f string, v ...any) error {
	return fmt.Errorf("%w: %s", ErrBadJob, fmt.Sprintf(f, v...))
}

// create adds a job to the registry.
func (js *Jobs) create(req jobRequest, now time.Time) (*uiJob, error) {
	cfg := js.cfg
	if req.Size < 1 || req.Size > cfg.MaxSize {
		return nil, badJob("size %d: want 1 to %d ranks", req.Size, cfg.MaxSize)
	}
	if req.Max == 0 {
		req.Max = req.Size
	}
	if req.Max < req.Size || req.Max > cfg.MaxSize {
		return nil, badJob("max %d: want the size (%d) to %d ranks", req.Max, req.Size, cfg.MaxSize)
	}
	if req.Minutes == 0 {
		req.Minutes = defaultMins
	}
	if req.Minutes < 1 || req.Minutes > cfg.MaxMinutes {
		return nil, badJob("time limit %d minutes: want 1 to %d", req.Minutes, cfg.MaxMinutes)
	}
	ice, err := parseICE(req.ICE)
	if err != nil {
		return nil, err
	}
	args, err := parseArgs(req.Args)
	if err != nil {
		return nil, err
	}
	switch {
	case req.Example != "" && req.RankWasm != nil:
		return nil, badJob("give an example or a program (.wasm), not both")
	case req.Example == "" && req.RankWasm == nil:
		return nil, badJob("give an example or upload a program (.wasm built with GOOS=js GOARCH=wasm)")
	case req.RankWasm != nil && !strings.HasPrefix(string(req.RankWasm[:min(4, len(req.RankWasm))]), wasmMagic):
		return nil, badJob("the program is not a WebAssembly module (build it with GOOS=js GOARCH=wasm go build -o prog.wasm)")
	case req.WASIWasm != nil && !strings.HasPrefix(string(req.WASIWasm[:min(4, len(req.WASIWasm))]), wasmMagic):
		return nil, badJob("the WASI program is not a WebAssembly module (build it with GOOS=wasip1 GOARCH=wasm go build -o prog.wasm)")
	}
	for _, b := range [][]byte{req.RankWasm, req.WASIWasm} {
		if int64(len(b)) > cfg.MaxUpload {
			return nil, badJob("a program of %d bytes: at most %d", len(b), cfg.MaxUpload)
		}
	}
	j := &uiJob{
		id: "ui-" + randomHex(10), invite: randomID(18), viewKey: randomID(24),
		example: req.Example, rankWasm: req.RankWasm, wasiWasm: req.WASIWasm, hasWASI: req.WASIWasm != nil, args: args,
		size: req.Size, max: req.Max, pool: req.Pool, created: now,
		deadline: now.Add(time.Duration(req.Minutes) * time.Minute), ice: ice,
		settings: map[string]string{"telemetry": "1", "net": "lan"}, seats: map[string]int{},
		issued: make([]time.Time, req.Size), state: "forming",
	}
	if cfg.Loopback {
		j.settings["net"] = "loopback"
	}
	j.sig = j.id
	if err := js.mint(j); err != nil {
		return nil, err
	}
	if req.RankWasm != nil {
		if j.rankGz, err = gzipBytes(req.RankWasm, gzip.BestSpeed); err != nil {
			return nil, err
		}
	}
	upload := int64(len(req.RankWasm) + len(j.rankGz) + len(req.WASIWasm))

	js.mu.Lock()
	defer js.mu.Unlock()
	if js.closed {
		return nil, fmt.Errorf("%w: the registry is closed", ErrConfig)
	}
	if j.example != "" && !js.programs[j.example] {
		return nil, badJob("no example %q on this server", j.example)
	}
	js.sweepLocked(now)
	if len(js.order) >= cfg.MaxJobs {
		return nil, fmt.Errorf("%w: the server holds %d jobs; end one first", ErrTooManyJobs, cfg.MaxJobs)
	}
	if js.stored+upload > cfg.MaxStored {
		return nil, fmt.Errorf("%w: the server holds %d bytes of programs already, and this job's %d would pass its limit of %d; end a job first",
			ErrTooManyJobs, js.stored, upload, cfg.MaxStored)
	}
	js.stored += upload
	js.byID[j.id] = j
	js.invites[j.invite] = j
	js.order = append(js.order, j)
	if len(ice) > 0 {
		js.ice.Store(j.sig, ice)
	}
	id := j.id
	j.timer = time.AfterFunc(j.deadline.Sub(now), func() {
		_ = js.end(id, "time limit reached")
	})
	js.notifyLocked()
	return j, nil
}

// sweepLocked forgets ended jobs older than KeepEnded, and while the
// registry is full, the ended job that ended first. js.mu is held.
func (js *Jobs) sweepLocked(now time.Time) {
	keep := js.order[:0]
	for _, j := range js.order {
		if j.ended && now.Sub(j.endedAt) >= js.cfg.KeepEnded {
			js.forgetLocked(j)
			continue
		}
		keep = append(keep, j)
	}
	clear(js.order[len(keep):])
	js.order = keep
	for len(js.order) >= js.cfg.MaxJobs {
		first := -1
		for i, j := range js.order {
			if j.ended && (first < 0 || j.endedAt.Before(js.order[first].endedAt)) {
				first = i
			}
		}
		if first < 0 {
			return
		}
		js.forgetLocked(js.order[first])
		js.order = append(js.order[:first], js.order[first+1:]...)
	}
}

func (js *Jobs) forgetLocked(j *uiJob) {
	delete(js.byID, j.id)
	delete(js.invites, j.invite)
	js.ice.Delete(j.sig)
}

// mint makes the seat tokens (and the late token of a job that grows) of
// j's signaling job, j.sig, and hands none of them out yet.
func (js *Jobs) mint(j *uiJob) error {
	c := signaling.Claims{Job: j.sig, Size: j.size, Expires: j.deadline.Unix(), Settings: j.settings}
	if j.max > j.size {
		c.Max = j.max
	}
	toks, err := signaling.MintSeats(js.cfg.Secret, c)
	if err != nil {
		return fmt.Errorf("web: mint seats: %w", err)
	}
	late := ""
	if c.Max > 0 {
		c.Late = true
		if late, err = signaling.Mint(js.cfg.Secret, c); err != nil {
			return fmt.Errorf("web: mint late token: %w", err)
		}
	}
	j.seatToks, j.lateTok = toks, late
	j.issued = make([]time.Time, j.size)
	j.lateN, j.lastLate = 0, time.Time{}
	return nil
}

// maxRestarts bounds the restarts of a job that keeps failing as it
// forms.
const maxRestarts = 100

// observeLocked brings the registry's record of j up to date with the
// server's view of its signaling job (if view is of j.sig): over or ended
// there, it is over here; failed as it formed (a seated job whose rank
// left), it restarts under a new signaling id with fresh seats; past its
// deadline, it is over. It reports whether view is (still) of j's
// current signaling job. js.mu is held.
func (js *Jobs) observeLocked(j *uiJob, view jobView, hasView bool, now time.Time) bool {
	if !j.ended && !now.Before(j.deadline) {
		js.finishLocked(j, "ended", "time limit reached", now)
	}
	if !hasView || view.Job != j.sig {
		return false
	}
	if j.ended {
		return true
	}
	switch st := view.State; st {
	case "over", "ended":
		why := view.Reason
		if why == "" {
			why = "every rank has left"
			if st == "ended" {
				why = "ended at the server"
			}
		}
		js.finishLocked(j, st, why, now)
	case "failed":
		if j.restarts >= maxRestarts {
			js.finishLocked(j, st, fmt.Sprintf("it failed %d times as it formed", j.restarts+1), now)
			return true
		}
		js.ice.Delete(j.sig)
		j.restarts++
		j.sig = fmt.Sprintf("%s.%d", j.id, j.restarts)
		if err := js.mint(j); err != nil {
			js.finishLocked(j, st, err.Error(), now)
			return false
		}
		if len(j.ice) > 0 {
			js.ice.Store(j.sig, j.ice)
		}
		j.state = "forming"
		j.reason = "restarted: a rank left before the job formed (" + view.Reason + ")"
		js.notifyLocked()
		return false
	default:
		j.state = st
	}
	return true
}

// sigOf returns j's current signaling job id.
func (js *Jobs) sigOf(j *uiJob) string {
	js.mu.Lock()
	defer js.mu.Unlock()
	return j.sig
}

// finishLocked marks j over: no more seats, uploads dropped. js.mu is
// held.
func (js *Jobs) finishLocked(j *uiJob, state, reason string, now time.Time) {
	if j.ended {
		return
	}
	j.ended, j.state, j.reason, j.endedAt = true, state, reason, now
	js.stored -= int64(len(j.rankWasm) + len(j.rankGz) + len(j.wasiWasm))
	j.rankWasm, j.rankGz, j.wasiWasm = nil, nil, nil
	if j.timer != nil {
		j.timer.Stop()
	}
	js.notifyLocked()
}

// end ends the job: no more seats, and the signaling server ends it for
// its members (error job-ended, and later joins too).
func (js *Jobs) end(id, reason string) error {
	js.mu.Lock()
	j := js.byID[id]
	if j == nil {
		js.mu.Unlock()
		return fmt.Errorf("%w %q", ErrUnknownJob, id)
	}
	js.finishLocked(j, "ended", reason, time.Now())
	sig := j.sig
	js.mu.Unlock()
	if srv := js.srv.Load(); srv != nil {
		if err := endJob(srv, sig, reason); err != nil {
			return fmt.Errorf("web: end job %s: %w", id, err)
		}
	}
	return nil
}

// lookup returns the job of an id, or nil.
func (js *Jobs) lookup(id string) *uiJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.byID[id]
}

// byInvite returns the job of an invite, or nil.
func (js *Jobs) byInvite(invite string) *uiJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.invites[invite]
}

// snapshot is what the registry says of a job, with the server's view.
type snapshot struct {
	j        *uiJob
	view     jobView
	hasView  bool
	state    string
	present  int
	ended    bool
	reason   string
	seatsOut int
	sig      string // the signaling job's id
	restarts int
}

// summaryAge is the most the summaries of the server's jobs lag.
const summaryAge = 250 * time.Millisecond

// summary returns the server's summary of a job (no consoles, no links),
// at most summaryAge old.
func (js *Jobs) summary(sig string) (jobView, bool) {
	srv := js.srv.Load()
	if srv == nil {
		return jobView{}, false
	}
	js.sumMu.Lock()
	defer js.sumMu.Unlock()
	if now := time.Now(); js.sums == nil || now.Sub(js.sumAt) >= summaryAge {
		list := srv.Jobs()
		js.sums = make(map[string]jobView, len(list))
		for _, v := range list {
			js.sums[v.Job] = v
		}
		js.sumAt = now
	}
	v, ok := js.sums[sig]
	return v, ok
}

// snap reads the server's view of j (its whole view if full, else its
// summary) and the registry's record of it (marking it over when the
// server says so).
func (js *Jobs) snap(j *uiJob, now time.Time, full bool) snapshot {
	var s snapshot
	s.j = j
	if full {
		if srv := js.srv.Load(); srv != nil {
			s.view, s.hasView = viewJob(srv, js.sigOf(j))
		}
	} else {
		s.view, s.hasView = js.summary(js.sigOf(j))
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if !js.observeLocked(j, s.view, s.hasView, now) {
		s.view, s.hasView = jobView{}, false
	}
	s.state, s.ended, s.reason, s.sig, s.restarts = j.state, j.ended, j.reason, j.sig, j.restarts
	if s.hasView {
		s.present = s.view.Present
	}
	for _, t := range j.issued {
		if !t.IsZero() {
			s.seatsOut++
		}
	}
	return s
}

// seatAnswer is a seat handed to a joiner.
type seatAnswer struct {
	rank  int // -1: a late rank, numbered by the server at its join
	token string
	seat  string // the status id
	late  bool
	sig   string // the signaling job the token joins
}

// joinRefusal is why a join got no seat: code as the join API says it.
type joinRefusal struct {
	code, message string
}

// seat hands the next free seat of j to a joiner.
func (js *Jobs) seat(j *uiJob, now time.Time) (seatAnswer, *joinRefusal) {
	var view jobView
	var hasView bool
	if srv := js.srv.Load(); srv != nil {
		view, hasView = viewJob(srv, js.sigOf(j))
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.seatLocked(j, view, hasView, now, false)
}

// seatLocked hands the next free seat of j to a joiner, by view of the
// server's job; dry: only says whether it would. js.mu is held.
func (js *Jobs) seatLocked(j *uiJob, view jobView, hasView bool, now time.Time, dry bool) (seatAnswer, *joinRefusal) {
	if !js.observeLocked(j, view, hasView, now) {
		view, hasView = jobView{}, false
	}
	if j.ended {
		if j.reason == "time limit reached" {
			return seatAnswer{}, &joinRefusal{"expired", "this invite expired: the job's time limit has passed"}
		}
		return seatAnswer{}, &joinRefusal{"job-ended", "the job is over (" + j.reason + ")"}
	}
	formed := hasView && view.State == "formed"
	joined := func(r int) bool {
		for _, rv := range view.Ranks {
			if rv.Rank == r && rv.State != "" {
				return true
			}
		}
		return false
	}
	newSeat := func(rank int) string {
		id := randomID(12)
		if len(j.seats) < maxSeatIDs {
			j.seats[id] = rank
		}
		return id
	}
	if !formed {
		for r, t := range j.issued {
			if t.IsZero() || (now.Sub(t) >= js.cfg.SeatReclaim && !joined(r)) {
				if dry {
					return seatAnswer{}, nil
				}
				j.issued[r] = now
				return seatAnswer{rank: r, token: j.seatToks[r], seat: newSeat(r), sig: j.sig}, nil
			}
		}
		if j.max > j.size {
			return seatAnswer{}, &joinRefusal{"job-full", fmt.Sprintf("all %d seats are taken and the job has not started yet: it takes up to %d more ranks once it has, try again then", j.size, j.max-j.size)}
		}
		return seatAnswer{}, &joinRefusal{"job-full", fmt.Sprintf("all %d seats are taken (a seat handed to a tab that never joined is given again after %v)", j.size, js.cfg.SeatReclaim)}
	}
	if j.max > j.size {
		admitted := 0
		for _, rv := range view.Ranks {
			if rv.Rank >= j.size && rv.State != "" {
				admitted++
			}
		}
		if j.lateN < j.max-j.size || (admitted < j.max-j.size && now.Sub(j.lastLate) >= js.cfg.SeatReclaim) {
			if dry {
				return seatAnswer{}, nil
			}
			j.lateN++
			j.lastLate = now
			return seatAnswer{rank: -1, token: j.lateTok, seat: newSeat(-1), late: true, sig: j.sig}, nil
		}
		return seatAnswer{}, &joinRefusal{"job-full", fmt.Sprintf("job full: %d of %d ranks", j.max, j.max)}
	}
	return seatAnswer{}, &joinRefusal{"job-full", fmt.Sprintf("the job started with its %d ranks and takes no more", j.size)}
}

// poolJob hands the next pool job that needs a rank a seat of it.
func (js *Jobs) poolJob(now time.Time) (*uiJob, seatAnswer, bool) {
	js.mu.Lock()
	var cands []*uiJob
	for _, j := range js.order {
		if j.pool && !j.ended {
			cands = append(cands, j)
		}
	}
	js.mu.Unlock()
	for _, j := range cands {
		// by the summaries first (many volunteers may be waiting), then
		// by the server's view now for the seat itself
		v, ok := js.summary(js.sigOf(j))
		js.mu.Lock()
		_, no := js.seatLocked(j, v, ok, now, true)
		js.mu.Unlock()
		if no != nil {
			continue
		}
		if a, no := js.seat(j, now); no == nil {
			return j, a, true
		}
	}
	return nil, seatAnswer{}, false
}

// Stats returns the jobs the registry holds (ended ones included, until
// they are dropped) and the volunteers waiting in POST /api/pool.
func (js *Jobs) Stats() (jobs int, waiting int64) {
	js.mu.Lock()
	defer js.mu.Unlock()
	return len(js.order), js.waiting.Load()
}

// changes returns the channel closed at the registry's next change.
func (js *Jobs) changes() <-chan struct{} {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.changed
}

// changesOrClosed is changes, and whether the registry is closed.
func (js *Jobs) changesOrClosed() (<-chan struct{}, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.changed, js.closed
}

// list returns the registry's jobs, oldest first.
func (js *Jobs) list() []*uiJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.sweepLocked(time.Now())
	return append([]*uiJob(nil), js.order...)
}

// uploads returns a job's programs (nil when it has none, or ended):
// the rank program, raw and gzipped, and the WASI one.
func (js *Jobs) uploads(j *uiJob) (rank, rankGz, wasi []byte) {
	js.mu.Lock()
	defer js.mu.Unlock()
	return j.rankWasm, j.rankGz, j.wasiWasm
}

// seatRank returns the rank a status seat id was given, if known.
func (js *Jobs) seatRank(j *uiJob, seat string) (int, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	r, ok := j.seats[seat]
	return r, ok
}

// parseICE reads the jobs page's ICE lines: "stun:host:port" or
// "turn:host:port?transport=udp USER PASS" (stuns:, turns: too), one a
// line; blank lines and # comments are skipped.
func parseICE(text string) ([]signaling.ICEServer, error) {
	var out []signaling.ICEServer
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		bad := func(why string) error {
			return badJob("ICE line %d %q: %s (want stun:host:port or turn:host:port?transport=udp USER PASS)", n+1, truncateWords(line, 80), why)
		}
		if len(out) == maxJobICE {
			return nil, badJob("more than %d ICE servers", maxJobICE)
		}
		for _, s := range f {
			if len(s) > 512 {
				return nil, bad("a field is too long")
			}
		}
		scheme, rest, ok := strings.Cut(f[0], ":")
		if !ok {
			return nil, bad("no scheme")
		}
		scheme = strings.ToLower(scheme)
		hostport, query, _ := strings.Cut(rest, "?")
		switch scheme {
		case "stun", "stuns":
			if len(f) != 1 {
				return nil, bad("a STUN server takes no user or password")
			}
			if query != "" {
				return nil, bad("a STUN URL has no query")
			}
		case "turn", "turns":
			if len(f) != 3 {
				return nil, bad("a TURN server needs a user and a password after its URL")
			}
			if query != "" && query != "transport=udp" && query != "transport=tcp" {
				return nil, bad("the query may only be transport=udp or transport=tcp")
			}
		default:
			return nil, bad("the scheme is not stun, stuns, turn or turns")
		}
		if err := validHostPort(hostport); err != nil {
			return nil, bad(err.Error())
		}
		s := signaling.ICEServer{URLs: []string{scheme + ":" + rest}}
		if len(f) == 3 {
			s.Username, s.Credential = f[1], f[2]
		}
		out = append(out, s)
	}
	return out, nil
}

func validHostPort(hp string) error {
	host, port := hp, ""
	if strings.HasPrefix(hp, "[") || strings.Count(hp, ":") == 1 {
		h, p, err := net.SplitHostPort(hp)
		if err != nil {
			return errors.New("bad host:port")
		}
		host, port = h, p
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return errors.New("bad port")
		}
	}
	if host == "" {
		return errors.New("no host")
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return errors.New("bad host name")
		}
	}
	return nil
}

// parseArgs splits the program's arguments at spaces.
func parseArgs(s string) ([]string, error) {
	if len(s) > maxArgsLen {
		return nil, badJob("arguments of %d bytes: at most %d", len(s), maxArgsLen)
	}
	args := strings.Fields(s)
	if len(args) > maxArgs {
		return nil, badJob("%d arguments: at most %d", len(args), maxArgs)
	}
	for _, a := range args {
		if len(a) > maxArgLen {
			return nil, badJob("an argument of %d bytes: at most %d", len(a), maxArgLen)
		}
	}
	if args == nil {
		args = []string{}
	}
	return args, nil
}

func truncateWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
