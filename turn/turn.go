package turn

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // TURN REST credentials are HMAC-SHA1 by definition (coturn, RFC 8489 §9.2 keys)
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/logging"
	pionturn "github.com/pion/turn/v5"
)

// Defaults of Config.
const (
	DefaultRealm     = "meshmpi"
	DefaultMinPort   = 49152
	DefaultMaxPort   = 49663 // 512 relay ports
	DefaultJobQuota  = 1024  // a 32-rank full mesh relaying every link
	DefaultRankQuota = 128
	// DefaultLifetime is the longest an allocation lives between two
	// refreshes (pion's default is 10 minutes; a client refreshes well
	// before). Refreshes need valid credentials: an allocation ends at
	// most this long after its credentials expire.
	DefaultLifetime = 10 * time.Minute
)

// ErrQuota is what Listen's server answers an allocation past a quota
// with (TURN's 486 Allocation Quota Reached).
var ErrQuota = errors.New("turn: allocation quota reached")

// Config configures a Server.
type Config struct {
	// Listen is the host:port STUN and TURN answer on, over UDP and over
	// TCP ("" port 0 picks one, the same for both when it can).
	Listen string
	// PublicIP is the address ranks reach the server at: it goes into
	// the URLs and is the address of every relayed candidate. If nil,
	// Listen's host, which must then be a specific address.
	PublicIP net.IP
	// RelayIP is the address relay sockets bind to; PublicIP if nil (set
	// it when the server sits behind a 1:1 NAT).
	RelayIP net.IP
	// Secret signs credentials (Credentials), shared with whoever mints
	// them: at least 16 bytes.
	Secret []byte
	// Realm is the TURN realm; DefaultRealm if "".
	Realm string
	// MinPort and MaxPort bound the relay ports, both inclusive: at most
	// MaxPort-MinPort+1 allocations at once. Defaults DefaultMinPort and
	// DefaultMaxPort.
	MinPort, MaxPort int
	// JobQuota and RankQuota bound the allocations one job and one rank
	// (one credential) hold at once. Defaults DefaultJobQuota and
	// DefaultRankQuota.
	JobQuota, RankQuota int
	// Lifetime is DefaultLifetime if 0.
	Lifetime time.Duration
	// Logger receives the server's warnings; slog.Default() if nil.
	Logger *slog.Logger
}

// Stats are a server's counters.
type Stats struct {
	Allocations int    // relay allocations open now
	Allocated   uint64 // allocations made since start
	Refused     uint64 // allocations refused by a quota
	AuthFailed  uint64 // requests with bad or expired credentials
	Relayed     uint64 // bytes relayed, both directions
}

// Server is a running STUN and TURN server.
type Server struct {
	cfg  Config
	srv  *pionturn.Server
	udp  net.PacketConn
	tcp  net.Listener
	urls []string

	mu     sync.Mutex
	byJob  map[string]int
	byRank map[string]int

	allocated, refused, authFailed, relayed atomic.Uint64
}

// Listen starts a server on cfg.Listen, UDP and TCP.
func Listen(cfg Config) (*Server, error) {
	if len(cfg.Secret) < 16 {
		return nil, errors.New("turn: the secret needs at least 16 bytes")
	}
	if cfg.Realm == "" {
		cfg.Realm = DefaultRealm
	}
	if cfg.MinPort == 0 && cfg.MaxPort == 0 {
		cfg.MinPort, cfg.MaxPort = DefaultMinPort, DefaultMaxPort
	}
	if cfg.MinPort < 1 || cfg.MaxPort > 65535 || cfg.MinPort > cfg.MaxPort {
		return nil, fmt.Errorf("turn: relay ports %d-%d", cfg.MinPort, cfg.MaxPort)
	}
	if cfg.JobQuota == 0 {
		cfg.JobQuota = DefaultJobQuota
	}
	if cfg.RankQuota == 0 {
		cfg.RankQuota = DefaultRankQuota
	}
	if cfg.JobQuota < 0 || cfg.RankQuota < 0 {
		return nil, fmt.Errorf("turn: quotas %d per job, %d per rank", cfg.JobQuota, cfg.RankQuota)
	}
	if cfg.Lifetime == 0 {
		cfg.Lifetime = DefaultLifetime
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("turn: listen address %q: %w", cfg.Listen, err)
	}
	if cfg.PublicIP == nil {
		cfg.PublicIP = net.ParseIP(host)
	}
	if cfg.PublicIP == nil || cfg.PublicIP.IsUnspecified() || cfg.PublicIP.To4() == nil {
		return nil, fmt.Errorf("turn: listening on %q needs a public IPv4 address for the ranks", cfg.Listen)
	}
	if cfg.RelayIP == nil {
		cfg.RelayIP = cfg.PublicIP
	}
	s := &Server{cfg: cfg, byJob: map[string]int{}, byRank: map[string]int{}}
	// UDP and TCP share a port number; with port 0, the TCP port of the
	// one the kernel picked for UDP may be taken: pick again
	for try := 0; ; try++ {
		if s.udp, err = net.ListenPacket("udp4", cfg.Listen); err != nil {
			return nil, fmt.Errorf("turn: %w", err)
		}
		port := s.udp.LocalAddr().(*net.UDPAddr).Port
		if s.tcp, err = net.Listen("tcp4", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
			break
		}
		_ = s.udp.Close()
		if !strings.HasSuffix(cfg.Listen, ":0") || try == 20 {
			return nil, fmt.Errorf("turn: %w", err)
		}
	}
	port := s.udp.LocalAddr().(*net.UDPAddr).Port
	setBuffers(s.udp)
	gen := &relayPorts{s: s, RelayAddressGeneratorPortRange: pionturn.RelayAddressGeneratorPortRange{
		RelayAddress: cfg.PublicIP, Address: cfg.RelayIP.String(),
		MinPort: uint16(cfg.MinPort), MaxPort: uint16(cfg.MaxPort),
		MaxRetries: 3 * (cfg.MaxPort - cfg.MinPort + 1),
	}}
	s.srv, err = pionturn.NewServer(pionturn.ServerConfig{
		Realm:        cfg.Realm,
		AuthHandler:  s.auth,
		QuotaHandler: s.quota,
		EventHandler: pionturn.EventHandler{
			OnAuth: func(_, _ net.Addr, _, _, _, _ string, ok bool) {
				if !ok { // a wrong password (auth counts bad usernames)
					s.authFailed.Add(1)
				}
			},
		},
		AllocationLifetime: cfg.Lifetime,
		LoggerFactory:      slogFactory{cfg.Logger},
		PacketConnConfigs:  []pionturn.PacketConnConfig{{PacketConn: s.udp, RelayAddressGenerator: gen}},
		ListenerConfigs:    []pionturn.ListenerConfig{{Listener: s.tcp, RelayAddressGenerator: gen}},
	})
	if err != nil {
		_ = s.udp.Close()
		_ = s.tcp.Close()
		return nil, fmt.Errorf("turn: %w", err)
	}
	hp := net.JoinHostPort(cfg.PublicIP.String(), strconv.Itoa(port))
	s.urls = []string{"stun:" + hp, "turn:" + hp + "?transport=udp", "turn:" + hp + "?transport=tcp"}
	return s, nil
}

// URLs are the server's ICE server URLs: STUN, TURN over UDP, TURN over
// TCP.
func (s *Server) URLs() []string { return s.urls }

// Addr is the address the server answers on (UDP and TCP).
func (s *Server) Addr() net.Addr { return s.udp.LocalAddr() }

// Credentials mints rank's credentials for s, valid until expires.
func (s *Server) Credentials(job string, rank int, expires time.Time) (username, credential string) {
	return Credentials(s.cfg.Secret, job, rank, expires)
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Allocations: s.srv.AllocationCount(),
		Allocated:   s.allocated.Load(),
		Refused:     s.refused.Load(),
		AuthFailed:  s.authFailed.Load(),
		Relayed:     s.relayed.Load(),
	}
}

// Close stops the server and ends every allocation.
func (s *Server) Close() error { return s.srv.Close() }

// Credentials mints TURN REST credentials for rank of job, valid until
// expires: the username "expiry:job:rank" and the base64 HMAC-SHA1 of it
// under secret. A coturn run with use-auth-secret and the same secret
// takes them too.
func Credentials(secret []byte, job string, rank int, expires time.Time) (username, credential string) {
	username = strconv.FormatInt(expires.Unix(), 10) + ":" + job + ":" + strconv.Itoa(rank)
	return username, password(secret, username)
}

func password(secret []byte, username string) string {
	mac := hmac.New(sha1.New, secret)
	mac.Write([]byte(username))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// parseUsername splits a username Credentials made; ok is false for any
// other string.
func parseUsername(u string) (expires time.Time, job string, rank int, ok bool) {
	first, last := strings.IndexByte(u, ':'), strings.LastIndexByte(u, ':')
	if first <= 0 || last <= first+1 {
		return time.Time{}, "", 0, false
	}
	sec, err1 := strconv.ParseInt(u[:first], 10, 64)
	r, err2 := strconv.Atoi(u[last+1:])
	if err1 != nil || err2 != nil || r < 0 {
		return time.Time{}, "", 0, false
	}
	return time.Unix(sec, 0), u[first+1 : last], r, true
}

// auth checks a request's credentials: made by Credentials with the
// server's secret, and not expired. Every Allocate, Refresh, permission
// and channel binding is checked, so an allocation whose credentials
// expired cannot be refreshed and ends within Lifetime.
func (s *Server) auth(ra *pionturn.RequestAttributes) (string, []byte, bool) {
	expires, _, _, ok := parseUsername(ra.Username)
	if !ok || time.Now().After(expires) {
		s.authFailed.Add(1)
		return "", nil, false
	}
	return ra.Username, pionturn.GenerateAuthKey(ra.Username, ra.Realm, password(s.cfg.Secret, ra.Username)), true
}

// quota refuses an allocation past the rank's or the job's quota.
func (s *Server) quota(username, _ string, _ net.Addr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.roomLocked(username)
	return ok
}

// take counts an allocation of user's against the quotas; false if one
// is full (a race past quota's check).
func (s *Server) take(user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	job, ok := s.roomLocked(user)
	if !ok {
		return false
	}
	s.byRank[user]++
	s.byJob[job]++
	s.allocated.Add(1)
	return true
}

// roomLocked reports whether user (a username Credentials made) and its
// job have room for another allocation, counting a refusal; s.mu is held.
func (s *Server) roomLocked(user string) (job string, ok bool) {
	_, job, _, ok = parseUsername(user)
	if !ok || s.byRank[user] >= s.cfg.RankQuota || s.byJob[job] >= s.cfg.JobQuota {
		s.refused.Add(1)
		return job, false
	}
	return job, true
}

// give returns an allocation's place in the quotas.
func (s *Server) give(user string) {
	_, job, _, _ := parseUsername(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byRank[user]--; s.byRank[user] <= 0 {
		delete(s.byRank, user)
	}
	if s.byJob[job]--; s.byJob[job] <= 0 {
		delete(s.byJob, job)
	}
}

// socketBuffer is the UDP buffer size asked of the kernel for the
// server's sockets (it caps it at rmem_max/wmem_max): a relay forwards
// bursts of a whole SCTP window, which the default ~200 KiB drops, and
// every drop costs the link a retransmission.
const socketBuffer = 4 << 20

func setBuffers(c net.PacketConn) {
	if u, ok := c.(interface {
		SetReadBuffer(int) error
		SetWriteBuffer(int) error
	}); ok {
		_ = u.SetReadBuffer(socketBuffer)
		_ = u.SetWriteBuffer(socketBuffer)
	}
}

// relayPorts allocates relay sockets from the port range, counted
// against the quotas and wrapped to count the bytes they relay.
type relayPorts struct {
	s *Server
	pionturn.RelayAddressGeneratorPortRange
}

func (g *relayPorts) AllocatePacketConn(c pionturn.AllocateListenerConfig) (net.PacketConn, net.Addr, error) {
	if !g.s.take(c.UserID) {
		return nil, nil, ErrQuota
	}
	conn, addr, err := g.RelayAddressGeneratorPortRange.AllocatePacketConn(c)
	if err != nil {
		g.s.give(c.UserID)
		return nil, nil, fmt.Errorf("turn: no free relay port in %d-%d: %w", g.MinPort, g.MaxPort, err)
	}
	setBuffers(conn)
	return &countedConn{PacketConn: conn, s: g.s, user: c.UserID}, addr, nil
}

// AllocateListener refuses TCP relays (RFC 6062): a WebRTC peer never asks
// for one, and each would hold a listening port.
func (g *relayPorts) AllocateListener(pionturn.AllocateListenerConfig) (net.Listener, net.Addr, error) {
	return nil, nil, errors.New("turn: TCP relay allocations are not offered")
}

// AllocateConn refuses TCP relay connections, as AllocateListener does.
func (g *relayPorts) AllocateConn(pionturn.AllocateConnConfig) (net.Conn, error) {
	return nil, errors.New("turn: TCP relay allocations are not offered")
}

// countedConn is a relay socket: it counts the bytes it relays and gives
// its quota back once, when the allocation ends.
type countedConn struct {
	net.PacketConn
	s      *Server
	user   string
	closed atomic.Bool
}

func (c *countedConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, addr, err := c.PacketConn.ReadFrom(p)
	c.s.relayed.Add(uint64(max(n, 0)))
	return n, addr, err
}

// WriteTo counts the bytes before it writes them, so that whatever a peer
// has received is counted by then (counted after, a test that read the
// stats once the peer had answered saw only the answer), and takes back
// what the write did not send.
func (c *countedConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	c.s.relayed.Add(uint64(len(p)))
	n, err := c.PacketConn.WriteTo(p, addr)
	if unsent := len(p) - max(n, 0); unsent > 0 {
		c.s.relayed.Add(-uint64(unsent))
	}
	return n, err
}

func (c *countedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.s.give(c.user)
	}
	return c.PacketConn.Close()
}

// slogFactory passes pion's warnings and errors to a slog.Logger; its
// chatter below that level is dropped.
type slogFactory struct{ l *slog.Logger }

func (f slogFactory) NewLogger(scope string) logging.LeveledLogger {
	return slogLogger{f.l.With("scope", "turn/"+scope)}
}

type slogLogger struct{ l *slog.Logger }

func (slogLogger) Trace(string)                       {}
func (slogLogger) Tracef(string, ...any)              {}
func (slogLogger) Debug(string)                       {}
func (slogLogger) Debugf(string, ...any)              {}
func (slogLogger) Info(string)                        {}
func (slogLogger) Infof(string, ...any)               {}
func (l slogLogger) Warn(msg string)                  { l.l.Warn(msg) }
func (l slogLogger) Warnf(format string, args ...any) { l.l.Warn(fmt.Sprintf(format, args...)) }
func (l slogLogger) Error(msg string)                 { l.l.Error(msg) }
func (l slogLogger) Errorf(format string, args ...any) {
	l.l.Error(fmt.Sprintf(format, args...))
}
