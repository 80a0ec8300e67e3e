//go:build !js

package signaling

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The liveness defaults: a frozen rank is declared failed within their
// sum (see Config.PingInterval). The interval sets the heartbeat's cost:
// native clients beat every 0.9 PingInterval, and at 10,000 idle ranks
// one server spends about 4% of a core on them at 5 s, 10% at 2 s
// (docs/signaling-load.md); the timeout is what a live but loaded rank
// has to answer a ping that a late beat drew.
const (
	DefaultPingInterval = 5 * time.Second
	DefaultPingTimeout  = 3 * time.Second
)

// Config configures a Server. Zero fields take the defaults named beside them;
// negative values are errors.
type Config struct {
	// Secret signs job tokens (at least MinSecretLen bytes). Required.
	Secret []byte
	// AdminKey, if set, enables POST /admin/token, guarded by
	// "Authorization: Bearer <AdminKey>".
	AdminKey string
	// ICEServers are sent to every rank in its Welcome.
	ICEServers []ICEServer
	// ICECredentials, if set, adds ICE servers with credentials of the
	// joining rank's own to its Welcome: short-lived TURN credentials
	// (the embedded relay's, package turn, or a coturn's
	// use-auth-secret ones) that expire with the job's token. It runs
	// under the server's lock, so it must be quick (an HMAC).
	ICECredentials func(job string, rank int, expires time.Time) []ICEServer
	// OriginPatterns lists the browser origins allowed to connect (host
	// patterns as in websocket.AcceptOptions). Requests without an Origin
	// header or from the server's own host are always allowed.
	OriginPatterns []string

	MaxMessageBytes int           // per message, default 64 KiB, at most MaxMessageBytes
	MessageRate     float64       // messages per second per connection, default 50
	MessageBurst    int           // token-bucket depth, default 200
	MaxJobs         int           // jobs per server, default 1000
	MaxConns        int           // connections per server, default 10000
	MaxJobSize      int           // ranks per job, default 1024
	MaxEndedJobs    int           // jobs remembered after they failed or ended (until their tokens expire), default 10000
	SendQueue       int           // outbound messages queued per connection, default 1024
	SendQueueBytes  int           // outbound bytes queued per connection, default 1 MiB (past either, the connection is dropped as slow-consumer)
	JoinTimeout     time.Duration // from accept to join, default 10s
	// A connection is pinged every PingInterval and dropped when a pong
	// takes longer than PingTimeout (a rank of a formed job is declared
	// failed: its departure announced, itself evicted), so a frozen rank
	// (SIGSTOP, a hung host) is gone for the server and every survivor
	// within PingInterval+PingTimeout and a heartbeat tick (about 8.2 s
	// by default). The survivors'
	// links see it later: ICE's consent checks give up in about 6 s and
	// the ICE restart that follows takes 6 s more (package peer), and a
	// survivor with no link to it has nothing else to tell it. A live
	// rank has PingTimeout to answer, however loaded its host (a rank
	// that beats is pinged only when a beat is late).
	PingInterval time.Duration // websocket ping period, default 5s
	PingTimeout  time.Duration // wait for a pong, default 3s
	WriteTimeout time.Duration // one write, default 10s
	MaxTokenTTL  time.Duration // longest TTL the admin endpoint mints, default 7 days

	// The job records for viewers (View, Events; see Views in the
	// package doc). TelemetryEvents bounds each job's event ring (default
	// 16384 events), TelemetryBytes each job's record (its ring, console
	// tails, links and ranks; default 8 MiB), TelemetryTotalBytes all
	// records together (default 256 MiB); past a bound the oldest events
	// go first. ConsoleTail is how many of each rank's last console lines
	// a view shows (default 200).
	TelemetryEvents     int
	TelemetryBytes      int
	TelemetryTotalBytes int
	ConsoleTail         int

	// Departed, if set, is told of every departure from a formed job as
	// the server announces it: a launcher's record of which ranks failed,
	// how and when. It runs under the server's lock: it must be quick and
	// must not call the server.
	Departed func(Departure)

	// Cluster, if set, makes the server one of a cluster (see Bus): any
	// server of it admits any job's ranks. ResumeGrace is how long the
	// seat of a rank whose server was lost waits for it to resume
	// through another (default DefaultResumeGrace).
	Cluster     Bus
	ResumeGrace time.Duration

	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// Departure is a rank's departure from a formed job (Config.Departed).
type Departure struct {
	Job    string
	Rank   int
	Reason string    // as the job's other ranks are told it (Left.Reason)
	At     time.Time // when the server announced it
	// Clean says the rank closed its connection normally, as Finalize
	// does.
	Clean bool
	// Declared says the server declared the rank failed (fail-stop): a
	// peer lost its link to it (Suspect), or it stopped answering pings.
	Declared bool
	// Late says the rank joined after the job formed (Welcome.Late).
	Late bool
}

func (c Config) withDefaults() (Config, error) {
	bad := func(f string, v ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(f, v...))
	}
	if len(c.Secret) < MinSecretLen {
		return bad("secret must have at least %d bytes", MinSecretLen)
	}
	if c.MaxMessageBytes < 0 || c.MaxMessageBytes > MaxMessageBytes {
		return bad("MaxMessageBytes %d outside [0, %d]", c.MaxMessageBytes, MaxMessageBytes)
	}
	if c.MaxJobSize < 0 || c.MaxJobSize > MaxJobSize {
		return bad("MaxJobSize %d outside [0, %d]", c.MaxJobSize, MaxJobSize)
	}
	if c.MessageRate < 0 || c.MessageBurst < 0 || c.MaxJobs < 0 || c.MaxConns < 0 || c.SendQueue < 0 || c.SendQueueBytes < 0 || c.MaxEndedJobs < 0 ||
		c.JoinTimeout < 0 || c.PingInterval < 0 || c.PingTimeout < 0 || c.WriteTimeout < 0 || c.MaxTokenTTL < 0 || c.ResumeGrace < 0 ||
		c.TelemetryEvents < 0 || c.TelemetryBytes < 0 || c.TelemetryTotalBytes < 0 || c.ConsoleTail < 0 {
		return bad("negative limit")
	}
	if len(c.ICEServers) > MaxICEServers {
		return bad("more than %d ICE servers", MaxICEServers)
	}
	for _, s := range c.ICEServers {
		if err := s.validate(); err != nil {
			return bad("%v", err)
		}
	}
	for _, p := range c.OriginPatterns {
		if p == "" {
			return bad("empty origin pattern")
		}
	}
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	defd := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.MaxMessageBytes, 64<<10)
	def(&c.MessageBurst, 200)
	def(&c.MaxJobs, 1000)
	def(&c.MaxConns, 10000)
	def(&c.MaxJobSize, 1024)
	def(&c.SendQueue, 1024)
	def(&c.SendQueueBytes, 1<<20)
	def(&c.MaxEndedJobs, 10000)
	def(&c.TelemetryEvents, 16384)
	def(&c.TelemetryBytes, 8<<20)
	def(&c.TelemetryTotalBytes, 256<<20)
	def(&c.ConsoleTail, 200)
	if c.MessageRate == 0 {
		c.MessageRate = 50
	}
	defd(&c.JoinTimeout, 10*time.Second)
	defd(&c.PingInterval, DefaultPingInterval)
	defd(&c.PingTimeout, DefaultPingTimeout)
	defd(&c.WriteTimeout, 10*time.Second)
	defd(&c.MaxTokenTTL, 7*24*time.Hour)
	defd(&c.ResumeGrace, DefaultResumeGrace)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Secret = append([]byte(nil), c.Secret...)
	return c, nil
}

// Server is the signaling server. It serves the websocket endpoint at /ws and,
// when Config.AdminKey is set, POST /admin/token ({"job", "size", "ttl"?,
// "settings"?, "rank"?, "open"?, "max"?, "late"?}: the seat tokens of the
// job, one seat's token, an open token, or a late token; max lets the job
// grow). Close it to end every connection.
type Server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux

	mu       sync.Mutex
	closed   bool
	jobs     map[string]*job
	ended    map[string]grave // jobs that are over, by id
	graves   []graveRef       // ended in the order they were buried, to drop the oldest first
	graveSeq uint64
	conns    map[*conn]struct{}
	wg       sync.WaitGroup
	// teles are the jobs' records for viewers, by id (telemetry_server.go);
	// teleBytes their approximate size, all together.
	teles     map[string]*jobTele
	teleBytes atomic.Int64
	teleFreed time.Time // the last freeEndedTele

	joins      atomic.Uint64
	relayed    atomic.Uint64
	departed   atomic.Uint64
	failedJobs atomic.Uint64
	sent       atomic.Uint64
	declared   atomic.Uint64
	lateJoins  atomic.Uint64
	// nameAnswers counts the Names sent (publish, unpublish, lookup)
	nameAnswers atomic.Uint64

	// The cluster (cluster.go): homes caches the server of each job
	// (guarded by homeMu, which also orders take-overs); bridges are the
	// websockets whose job another server serves, by id; remotes the
	// ranks whose websocket another server holds; draining is set by
	// Drain. saveMu orders the saves of job states.
	homeMu     sync.Mutex
	homes      map[string]string
	bridges    map[uint64]*conn
	nextBridge uint64
	remotes    map[remoteKey]*conn
	draining   bool
	saveMu     sync.Mutex
	resumed    atomic.Uint64

	leaveHook func() // tests: called (under mu) after a departure was handled
	statsMu   sync.Mutex
	rejected  map[ErrorCode]uint64
	paths     map[string]uint64 // links reported, by direct or relay
}

// NewServer validates cfg and returns a server.
func NewServer(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		mux:      http.NewServeMux(),
		jobs:     make(map[string]*job),
		ended:    make(map[string]grave),
		teles:    make(map[string]*jobTele),
		conns:    make(map[*conn]struct{}),
		rejected: make(map[ErrorCode]uint64),
		paths:    make(map[string]uint64),
	}
	s.mux.HandleFunc("GET /ws", s.serveWS)
	s.mux.HandleFunc("POST /admin/token", s.serveAdminToken)
	if cfg.Cluster != nil {
		s.homes = make(map[string]string)
		s.bridges = make(map[uint64]*conn)
		s.remotes = make(map[remoteKey]*conn)
		if err := cfg.Cluster.Start(s.deliver, s.lost); err != nil {
			return nil, fmt.Errorf("signaling: cluster: %w", err)
		}
	}
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close sends every connection a shutdown error, closes it, and waits for its
// handler to return. New connections are refused.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, j := range s.jobs {
		for r, t := range j.suspects {
			t.Stop()
			delete(j.suspects, r)
		}
	}
	for c := range s.conns {
		c.kill(&Error{Code: CodeShutdown, Message: "server shutting down"}, false)
	}
	for _, c := range s.remotes {
		c.kill(nil, true) // their own servers close their websockets
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	Jobs       int                  // jobs with at least one rank present
	Ranks      int                  // ranks present, over all jobs
	Ended      int                  // jobs remembered after they failed or ended
	Conns      int                  // open websocket connections
	Joins      uint64               // successful joins
	Departures uint64               // ranks that left (closed, broke, or stopped answering pings)
	FailedJobs uint64               // jobs failed by a departure before they formed
	Declared   uint64               // ranks declared failed (a peer lost its link to them, or no pong), counted in Departures too
	LateJoins  uint64               // late ranks admitted to formed jobs that grow (Claims.Max), counted in Joins too
	Resumed    uint64               // seats taken back through this server after a cluster server's loss (Join.Resume)
	Relayed    uint64               // signals relayed
	Sent       uint64               // messages queued to clients, of every type
	Rejected   map[ErrorCode]uint64 // fatal and non-fatal errors sent, by code
	// Paths counts the links ranks reported (Path), by "direct" or
	// "relay" over WebRTC, and "memory", "shm" or "unix" for same-host
	// links (present once one was reported).
	Paths map[string]uint64
	// Names counts the services published (Publish) over all jobs, and
	// NameAnswers the answers to Publish, Unpublish and Lookup sent
	// (Name), failures included.
	Names       int
	NameAnswers uint64
	// Records counts the job records for viewers the server holds (see
	// Views in the package doc), RecordBytes their approximate size.
	Records     int
	RecordBytes int64
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := Stats{Jobs: len(s.jobs), Ended: len(s.ended), Conns: len(s.conns), Records: len(s.teles), RecordBytes: s.teleBytes.Load()}
	for _, j := range s.jobs {
		st.Ranks += j.present
		st.Names += len(j.names)
	}
	s.mu.Unlock()
	st.Joins, st.Relayed = s.joins.Load(), s.relayed.Load()
	st.Departures, st.FailedJobs, st.Sent = s.departed.Load(), s.failedJobs.Load(), s.sent.Load()
	st.Declared, st.LateJoins, st.Resumed = s.declared.Load(), s.lateJoins.Load(), s.resumed.Load()
	st.NameAnswers = s.nameAnswers.Load()
	s.statsMu.Lock()
	st.Rejected = make(map[ErrorCode]uint64, len(s.rejected))
	for k, v := range s.rejected {
		st.Rejected[k] = v
	}
	st.Paths = map[string]uint64{"direct": s.paths["direct"], "relay": s.paths["relay"]}
	for _, k := range []string{"memory", "shm", "unix"} {
		if v := s.paths[k]; v > 0 {
			st.Paths[k] = v
		}
	}
	s.statsMu.Unlock()
	return st
}

func (s *Server) countRejected(code ErrorCode) {
	s.statsMu.Lock()
	s.rejected[code]++
	s.statsMu.Unlock()
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	// acceptBuffers: small bufio buffers for an idle rank (conn.go)
	ws, err := websocket.Accept(acceptBuffers{w}, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.OriginPatterns})
	if err != nil {
		s.log.Info("websocket accept failed", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"), "err", err)
		return
	}
	c := newConn(s, ws, r.RemoteAddr)
	if e := s.register(c); e != nil {
		c.reject(e)
		return
	}
	// The connection gets a goroutine of its own (which unregisters it
	// when it ends) and the handler returns: net/http's state for the
	// request (its buffers, the request, the response) and the handler's
	// deep stack go with it, about 10 KB an idle rank would otherwise
	// keep.
	go c.run()
}

func (s *Server) register(c *conn) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return &Error{Code: CodeShutdown, Message: "server shutting down"}
	}
	if len(s.conns) >= s.cfg.MaxConns {
		return &Error{Code: CodeTooManyConns, Message: fmt.Sprintf("server holds %d connections", s.cfg.MaxConns)}
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return nil
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

// tokenRequest is the body of POST /admin/token: the seat tokens of a job
// by default, one seat's with rank, or an open token with open.
type tokenRequest struct {
	Job      string            `json:"job"`
	Size     int               `json:"size"`
	TTL      string            `json:"ttl,omitempty"` // Go duration, default 1h
	Settings map[string]string `json:"settings,omitempty"`
	Rank     *int              `json:"rank,omitempty"` // only this seat's token
	Open     bool              `json:"open,omitempty"` // one token for any free seat (volunteer jobs)
	Max      int               `json:"max,omitempty"`  // the job may grow to this many ranks
	Late     bool              `json:"late,omitempty"` // one token for late ranks only
}

type tokenResponse struct {
	Token   string    `json:"token,omitempty"`  // open, or the one seat's
	Tokens  []string  `json:"tokens,omitempty"` // every seat's, by rank
	Expires time.Time `json:"expires"`
}

func (s *Server) serveAdminToken(w http.ResponseWriter, r *http.Request) {
	if s.cfg.AdminKey == "" {
		http.NotFound(w, r)
		return
	}
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.AdminKey)) != 1 {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageBytes+1))
	if err != nil || len(data) > MaxMessageBytes {
		http.Error(w, "bad request body", http.StatusBadRequest)
		return
	}
	var req tokenRequest
	if err := strictUnmarshal(data, &req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	ttl := time.Hour
	if req.TTL != "" {
		if ttl, err = time.ParseDuration(req.TTL); err != nil || ttl <= 0 || ttl > s.cfg.MaxTokenTTL {
			http.Error(w, fmt.Sprintf("bad ttl (must be in (0, %s])", s.cfg.MaxTokenTTL), http.StatusBadRequest)
			return
		}
	}
	if req.Size > s.cfg.MaxJobSize || req.Max > s.cfg.MaxJobSize {
		http.Error(w, fmt.Sprintf("size or max above the server's limit %d", s.cfg.MaxJobSize), http.StatusBadRequest)
		return
	}
	if (req.Open || req.Late) && req.Rank != nil {
		http.Error(w, "open or late and rank exclude each other", http.StatusBadRequest)
		return
	}
	exp := time.Now().Add(ttl).Truncate(time.Second)
	c := Claims{Job: req.Job, Size: req.Size, Expires: exp.Unix(), Settings: req.Settings, Seat: req.Rank, Max: req.Max, Late: req.Late}
	resp := tokenResponse{Expires: exp}
	if req.Open || req.Late || req.Rank != nil {
		resp.Token, err = Mint(s.cfg.Secret, c)
	} else {
		resp.Tokens, err = MintSeats(s.cfg.Secret, c)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.log.Info("token minted", "job", req.Job, "size", req.Size, "max", req.Max, "open", req.Open, "late", req.Late, "rank", req.Rank, "expires", exp)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}
