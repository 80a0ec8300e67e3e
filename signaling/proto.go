package signaling

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Version is the protocol version this package speaks; every envelope carries it.
const Version = 1

// MaxMessageBytes is the hard upper bound on one encoded message. A server may
// be configured with a lower limit, never a higher one.
const MaxMessageBytes = 1 << 20

// Field bounds checked by Validate.
const (
	MaxJobIDLen   = 128     // bytes in a job id
	MaxTokenLen   = 4096    // bytes in a token
	MaxJobSize    = 1 << 16 // ranks in one job
	MaxSettings   = 256     // entries in a job's settings
	MaxSettingLen = 1024    // bytes in one settings key or value
	MaxICEServers = 16      // ICE servers in a welcome
	// MaxFingerprintLen bounds a certificate fingerprint (sha-512's is 191
	// bytes).
	MaxFingerprintLen = 200
	// MaxHostLen bounds a host identity (Join.Host): a hash, or a token
	// the launcher handed out.
	MaxHostLen     = 64
	MaxPayloadLen  = 64 << 10 // bytes of one signal payload
	MaxTextLen     = 1024     // bytes of an error message or reason
	maxICEURLs     = 16
	maxICEFieldLen = 1024
	// MaxNameLen bounds a service name and a port in the name service
	// (Publish, Unpublish, Lookup, Name): bytes of valid UTF-8.
	MaxNameLen = 256
)

// The server's limits on the name service (see Names in the package doc);
// past them a request is answered with CodeNameLimit.
const (
	// MaxNames is the most services one job has published at once.
	MaxNames = 64
	// MaxWaitingLookups is the most lookups (Lookup.Wait) one connection
	// has parked at once.
	MaxWaitingLookups = 16
)

// Type names a message type on the wire.
type Type string

// Message types.
const (
	TypeJoin    Type = "join"
	TypeWelcome Type = "welcome"
	TypeReady   Type = "ready"
	TypeSignal  Type = "signal"
	TypeLeft    Type = "left"
	TypeError   Type = "error"
	TypePing    Type = "ping"
	TypePong    Type = "pong"
	TypePath    Type = "path"
	TypeAbort   Type = "abort"
	TypeSuspect Type = "suspect"
	TypeLeaving Type = "leaving"
	TypeJoined  Type = "joined"
	TypeMove    Type = "move"
	// The name service (see Names in the package doc).
	TypePublish   Type = "publish"   // client → server
	TypeUnpublish Type = "unpublish" // client → server
	TypeLookup    Type = "lookup"    // client → server
	TypeName      Type = "name"      // server → client: the answer to each of the three
)

// ClientKind says what runs a rank.
type ClientKind string

// Client kinds.
const (
	KindNative  ClientKind = "native"
	KindBrowser ClientKind = "browser"
	KindWASI    ClientKind = "wasi"
)

func (k ClientKind) valid() bool { return k == KindNative || k == KindBrowser || k == KindWASI }

// SignalKind says what a signal's payload is.
type SignalKind string

// Signal kinds.
const (
	SignalOffer     SignalKind = "sdp-offer"
	SignalAnswer    SignalKind = "sdp-answer"
	SignalCandidate SignalKind = "ice-candidate"
	// SignalConnect asks the receiver to open a connection by sending an
	// offer. Ranks use it to keep one offerer per pair (the lower rank), so
	// two ranks that start talking at once never make two connections.
	SignalConnect SignalKind = "connect"
	// SignalLink sets up a same-host link between ranks whose hosts are
	// equal (Ready.Hosts), in place of an offer: the lower rank tells
	// the higher where and how to reach it (package mesh).
	SignalLink SignalKind = "link"
)

func (k SignalKind) valid() bool {
	return k == SignalOffer || k == SignalAnswer || k == SignalCandidate || k == SignalConnect || k == SignalLink
}

// ErrorCode is the machine-readable part of an Error message.
type ErrorCode string

// Error codes sent by the server. Every one except CodeRankAbsent is followed by
// a close of the connection.
const (
	CodeBadMessage   ErrorCode = "bad-message"    // undecodable or invalid message
	CodeTooLarge     ErrorCode = "too-large"      // message over the size limit
	CodeRateLimited  ErrorCode = "rate-limited"   // message rate over the limit
	CodeProtocol     ErrorCode = "protocol"       // valid message at the wrong time
	CodeBadToken     ErrorCode = "bad-token"      // token invalid or for another job
	CodeExpiredToken ErrorCode = "expired-token"  // token expired
	CodeJobMismatch  ErrorCode = "job-mismatch"   // token's size/settings differ from the job's
	CodeRankTaken    ErrorCode = "rank-taken"     // requested rank already joined
	CodeBadRank      ErrorCode = "bad-rank"       // rank outside [0, size) or own rank
	CodeJobFull      ErrorCode = "job-full"       // all ranks joined, or job already started
	CodeJobFailed    ErrorCode = "job-failed"     // a rank of a seated job left before it formed: it never will
	CodeJobEnded     ErrorCode = "job-ended"      // the job formed and every rank has left
	CodeTooManyJobs  ErrorCode = "too-many-jobs"  // server job limit
	CodeTooManyConns ErrorCode = "too-many-conns" // server connection limit
	CodeJoinTimeout  ErrorCode = "join-timeout"   // no join in time
	CodeSlowConsumer ErrorCode = "slow-consumer"  // outbound queue overflowed
	CodeShutdown     ErrorCode = "shutdown"       // server is shutting down
	CodeRankAbsent   ErrorCode = "rank-absent"    // signal to a rank not present (not fatal)
	CodeInternal     ErrorCode = "internal"       // server bug
	// CodeDeclaredFailed evicts a rank the server declared failed (a
	// peer lost its link to it, or it stopped answering pings), and
	// refuses it when it tries to join again: failures are fail-stop.
	CodeDeclaredFailed ErrorCode = "declared-failed"
	// CodeNotFormed refuses an open token's join to a seated job that
	// may grow (Claims.Max) before it formed: such a token admits late
	// ranks only, once the job's Size seats are all present. Unlike the
	// other refusals, trying again later may succeed.
	CodeNotFormed ErrorCode = "not-formed"
	// CodeResumeRefused refuses a Join.Resume: the seat it names is not
	// held for it (the rank left or was declared failed, the seat's
	// wait ran out, or the key is wrong).
	CodeResumeRefused ErrorCode = "resume-refused"
)

// Codes of a failed name service request, carried in its answer (Name.Code)
// rather than in an Error: nothing is closed.
const (
	CodeNameTaken   ErrorCode = "name-taken"   // Publish of a service already published in the job
	CodeNameUnknown ErrorCode = "name-unknown" // Unpublish or Lookup of a service not published
	CodeNameLimit   ErrorCode = "name-limit"   // MaxNames published in the job, or MaxWaitingLookups parked
)

// Message is one protocol message. The concrete types are *Join, *Welcome,
// *Ready, *Joined, *Signal, *Path, *Abort, *Suspect, *Leaving, *Left, *Error,
// *Publish, *Unpublish, *Lookup, *Name, *Telemetry, *Ping and *Pong; no
// others can be sent.
//
// The json tags on their fields name the members on the wire. The codec
// (json.go) writes and reads them by hand; a test holds it to what
// encoding/json does with these tags.
type Message interface {
	// Type is the message's wire type.
	Type() Type
	// Validate reports a missing or out-of-range field, wrapping ErrInvalid.
	Validate() error
	// appendData appends the message's data object.
	appendData(b []byte) []byte
	// field reads data member key; known is false for a key the type lacks.
	field(r *jsonReader, key string) (known bool, err error)
}

// Join is the first message a client sends.
type Join struct {
	Job   string     `json:"job"`
	Token string     `json:"token"`
	Rank  *int       `json:"rank,omitempty"` // requested rank; nil for the next free one
	Kind  ClientKind `json:"kind"`
	// Fingerprint is the rank's DTLS certificate fingerprint ("sha-256
	// AB:CD:…"), which the server vouches for to the other ranks (Ready);
	// "" announces none.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Host names the machine and user the rank runs as, so ranks that
	// share both can link without WebRTC: an opaque value (a hash of the
	// boot id and uid natively, never the raw boot id), 1..MaxHostLen
	// bytes of [A-Za-z0-9._:-]; "" says none (a browser tab).
	Host string `json:"host,omitempty"`
	// Agent says what runs the rank, for dashboards: a browser's
	// navigator.userAgent, "meshmpi go1.26 linux/amd64" natively. At
	// most MaxAgentLen bytes of UTF-8 (ClipText); "" says nothing.
	Agent string `json:"agent,omitempty"`
	// Resume takes back the seat Rank of a rank whose signaling server
	// of a cluster was lost or moved it (Move): the key its Welcome
	// gave (Welcome.Resume), with the same token. "" for a first join.
	Resume string `json:"resume,omitempty"`
}

// Welcome answers a successful Join.
type Welcome struct {
	Protocol   int               `json:"protocol"`
	Job        string            `json:"job"`
	Rank       int               `json:"rank"`
	Size       int               `json:"size"`
	ICEServers []ICEServer       `json:"iceServers,omitempty"`
	Settings   map[string]string `json:"settings,omitempty"`
	Limits     *Limits           `json:"limits,omitempty"`
	// Max is the most ranks the job may grow to (Claims.Max), when it
	// is more than Size: ranks Size…Max-1 join late, after the job
	// formed (see Growth in the package doc). 0 when the job cannot
	// grow. Every rank can size its tables for Max.
	Max int `json:"max,omitempty"`
	// Late says this rank joined after the job formed: Rank is in
	// [Size, Max), outside the job's original world of Size ranks.
	Late bool `json:"late,omitempty"`
	// Resume is the key that takes this seat back through another
	// server of the cluster (Join.Resume); servers that are not part of
	// a cluster give none.
	Resume string `json:"resume,omitempty"`
	// Resumed says the join took back a seat (Join.Resume): the job's
	// messages that waited for the rank follow.
	Resumed bool `json:"resumed,omitempty"`
}

// Move tells a rank that its signaling server is going away (drain): it
// reconnects to another server of the cluster and takes its seat back
// (Join.Resume). Its links are untouched.
type Move struct {
	Reason string `json:"reason,omitempty"`
}

// Limit is the most ranks the job can hold: Max if it may grow, else Size.
func (m *Welcome) Limit() int { return max(m.Size, m.Max) }

// Limits are the server's limits on a connection, told to the client so it
// can stay inside them.
type Limits struct {
	MessageRate  float64 `json:"messageRate"`  // messages per second
	MessageBurst int     `json:"messageBurst"` // token-bucket depth
	MessageBytes int     `json:"messageBytes"` // largest message
	// HeartbeatMillis asks the client to send a message at least this
	// often (a pong if it has nothing to say): a server that hears from
	// a rank need not ping it, which is most of an idle server's work.
	// 0: the server pings as it needs.
	HeartbeatMillis int `json:"heartbeatMillis,omitempty"`
}

// ICEServer is one STUN or TURN server, in the shape of WebRTC's RTCIceServer.
type ICEServer struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username,omitempty"`
	Credential string   `json:"credential,omitempty"`
}

// Ready tells every rank that all Size ranks are present. Kinds[r] is rank r's
// client kind. The Ready a late rank gets (see Growth in the package doc)
// covers every rank admitted until then, itself included: Kinds and
// Fingerprints have one entry per rank 0…len(Kinds)-1, Size ≤ len(Kinds) ≤
// Max; the ranks of them that have left already follow in one Left.
type Ready struct {
	Size  int          `json:"size"`
	Kinds []ClientKind `json:"kinds"`
	// Fingerprints[r] is the certificate fingerprint rank r announced when
	// it joined with its seat token ("" if none): a rank accepts a link
	// from r only if it presents that certificate. Absent when no rank
	// announced one.
	Fingerprints []string `json:"fingerprints,omitempty"`
	// Hosts[r] is the host identity rank r announced (Join.Host, "" if
	// none): ranks with equal non-empty hosts share a machine and user.
	// Absent when no rank announced one.
	Hosts []string `json:"hosts,omitempty"`
	// Max is the job's Welcome.Max: the most ranks it may grow to, 0
	// when it cannot grow.
	Max int `json:"max,omitempty"`
}

// Joined tells the ranks present that a late rank joined a formed job
// (see Growth in the package doc), with what Ready says of the others:
// its kind, the certificate fingerprint the server vouches for and its host.
type Joined struct {
	Rank        int        `json:"rank"`
	Kind        ClientKind `json:"kind"`
	Fingerprint string     `json:"fingerprint,omitempty"`
	Host        string     `json:"host,omitempty"`
}

// Path reports how the sender reached one of its peers: the ICE
// candidate types of the pair its link took and ICE's round trip on it.
// The server counts and logs them: its view of which links are direct
// and which go through a relay.
type Path struct {
	Peer int `json:"peer"`
	// Local and Remote are host, srflx, prflx or relay over WebRTC;
	// memory, shm or unix (both) for a link that skips it.
	Local     string `json:"local"`
	Remote    string `json:"remote"` // the same
	RTTMicros int    `json:"rttMicros,omitempty"`
}

// Relayed reports whether the path goes through a TURN relay.
func (m *Path) Relayed() bool { return m.Local == "relay" || m.Remote == "relay" }

// Signal carries an SDP offer/answer or an ICE candidate between two ranks of
// one job. The server overwrites From with the sender's rank.
type Signal struct {
	To      int        `json:"to"`
	From    int        `json:"from"`
	Kind    SignalKind `json:"kind"`
	Payload []byte     `json:"payload"` // raw JSON, sent as is: any value but null (a string or an object), opaque to the server
}

// Abort is a rank's MPI_Abort: the rank ends, and the job with it. The
// server announces the rank's departure as an abort (Left.Aborted) with
// its code, so every rank can end with that code.
type Abort struct {
	Code  int    `json:"code"`
	Where string `json:"where,omitempty"` // the call's place in the program (file:line)
}

// Suspect is a rank's report that it lost its link to another rank of its
// job (the link closed, ICE did not reconnect, SCTP aborted) while the
// server may still see that rank connected: frozen, or cut off from the
// reporter only. The server declares the rank failed for good unless it
// leaves on its own first (see Failure knowledge in doc.go).
type Suspect struct {
	Rank   int    `json:"rank"`
	Reason string `json:"reason,omitempty"` // how the link was lost, in the reporter's words
}

// Leaving says the sender is about to leave the job cleanly (Finalize):
// the links it closes next are no failure, and a peer's report that it
// lost one (Suspect) does not declare it failed. Its departure is
// announced as usual when its connection closes.
type Leaving struct{}

// Left announces that a rank's connection is gone.
type Left struct {
	Rank   int    `json:"rank"`
	Reason string `json:"reason,omitempty"`
	// Also lists further ranks announced in the same notice: a formed
	// job's later departures come in batches (see Departures in doc.go).
	Also []int `json:"also,omitempty"`
	// Aborted says the rank called Abort with Code before it left: the
	// job is over.
	Aborted bool `json:"aborted,omitempty"`
	Code    int  `json:"code,omitempty"`
}

// Ranks returns every rank the notice announces: Rank, then Also.
func (m *Left) Ranks() []int { return append([]int{m.Rank}, m.Also...) }

// Error reports a failure. It is followed by a close unless Code is CodeRankAbsent.
type Error struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message,omitempty"`
}

// Publish names a port for the ranks of the same job (MPI_Publish_name).
// The name lasts until a rank of the job unpublishes it or the publishing
// rank leaves the job (see Names in the package doc).
type Publish struct {
	Service string `json:"service"`
	Port    string `json:"port"`
}

// Unpublish removes a service's name (MPI_Unpublish_name). Any rank of
// the job may remove any of its names.
type Unpublish struct {
	Service string `json:"service"`
}

// Lookup asks for a service's port (MPI_Lookup_name). With Wait the
// server answers once the service is published instead of answering
// name-unknown now.
type Lookup struct {
	Service string `json:"service"`
	Wait    bool   `json:"wait,omitempty"`
}

// Name answers one Publish, Unpublish or Lookup (Op says which, Service
// which one): Port on success of a lookup, Code on failure
// (CodeNameTaken, CodeNameUnknown or CodeNameLimit, with Message saying
// why). The server answers every request with exactly one Name, in the
// order the answers become available (a parked lookup's comes when the
// service is published), so a client correlates them by Op and Service.
type Name struct {
	Op      Type      `json:"op"`
	Service string    `json:"service"`
	Port    string    `json:"port,omitempty"`
	Code    ErrorCode `json:"code,omitempty"`
	Message string    `json:"message,omitempty"`
}

// Err returns nil when the request succeeded, else an error naming the
// service that wraps ErrNameTaken, ErrNameUnknown or ErrNameLimit as
// Code says.
func (m *Name) Err() error {
	var sentinel error
	switch m.Code {
	case "":
		return nil
	case CodeNameTaken:
		sentinel = ErrNameTaken
	case CodeNameUnknown:
		sentinel = ErrNameUnknown
	case CodeNameLimit:
		sentinel = ErrNameLimit
	default:
		sentinel = &RemoteError{Code: m.Code, Message: m.Message}
	}
	if m.Message != "" {
		return fmt.Errorf("%w: %s %q: %s", sentinel, m.Op, m.Service, m.Message)
	}
	return fmt.Errorf("%w: %s %q", sentinel, m.Op, m.Service)
}

// Ping asks the peer for a Pong with the same ID.
type Ping struct {
	ID uint64 `json:"id,omitempty"`
}

// Pong answers a Ping.
type Pong struct {
	ID uint64 `json:"id,omitempty"`
}

// Type implements Message.
func (*Join) Type() Type    { return TypeJoin }
func (*Welcome) Type() Type { return TypeWelcome }
func (*Ready) Type() Type   { return TypeReady }
func (*Signal) Type() Type  { return TypeSignal }
func (*Left) Type() Type    { return TypeLeft }
func (*Error) Type() Type   { return TypeError }
func (*Ping) Type() Type    { return TypePing }
func (*Pong) Type() Type    { return TypePong }
func (*Path) Type() Type    { return TypePath }
func (*Abort) Type() Type   { return TypeAbort }
func (*Suspect) Type() Type { return TypeSuspect }
func (*Leaving) Type() Type { return TypeLeaving }
func (*Joined) Type() Type  { return TypeJoined }
func (*Move) Type() Type    { return TypeMove }

// Type implements Message.
func (*Publish) Type() Type   { return TypePublish }
func (*Unpublish) Type() Type { return TypeUnpublish }
func (*Lookup) Type() Type    { return TypeLookup }
func (*Name) Type() Type      { return TypeName }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func validJobID(job string) error {
	if job == "" || len(job) > MaxJobIDLen {
		return invalid("job id must have 1..%d bytes", MaxJobIDLen)
	}
	for i := 0; i < len(job); i++ {
		c := job[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return invalid("job id may only hold [A-Za-z0-9._-]")
		}
	}
	return nil
}

func validSize(n int) error {
	if n < 1 || n > MaxJobSize {
		return invalid("size %d outside [1, %d]", n, MaxJobSize)
	}
	return nil
}

// validMax checks a job's growth limit: 0 (none), or in [size, MaxJobSize].
func validMax(maxRanks, size int) error {
	if maxRanks != 0 && (maxRanks < size || maxRanks > MaxJobSize) {
		return invalid("max %d outside [%d, %d]", maxRanks, size, MaxJobSize)
	}
	return nil
}

func validSettings(s map[string]string) error {
	if len(s) > MaxSettings {
		return invalid("more than %d settings", MaxSettings)
	}
	for k, v := range s {
		if k == "" || len(k) > MaxSettingLen || len(v) > MaxSettingLen {
			return invalid("settings keys need 1..%d bytes, values at most %d", MaxSettingLen, MaxSettingLen)
		}
	}
	return nil
}

// Validate implements Message.
func (m *Join) Validate() error {
	if err := validJobID(m.Job); err != nil {
		return err
	}
	if m.Token == "" || len(m.Token) > MaxTokenLen {
		return invalid("token must have 1..%d bytes", MaxTokenLen)
	}
	if m.Rank != nil && (*m.Rank < 0 || *m.Rank >= MaxJobSize) {
		return invalid("requested rank %d out of range", *m.Rank)
	}
	if !m.Kind.valid() {
		return invalid("client kind %q", m.Kind)
	}
	if err := validText("agent", m.Agent, MaxAgentLen); err != nil {
		return err
	}
	if err := validHost(m.Host); err != nil {
		return err
	}
	if m.Resume != "" {
		if m.Rank == nil {
			return invalid("resume names no rank")
		}
		if err := validResumeKey(m.Resume); err != nil {
			return err
		}
	}
	return validFingerprint(m.Fingerprint)
}

// MaxResumeKeyLen bounds a seat's resume key (Welcome.Resume).
const MaxResumeKeyLen = 64

// validResumeKey checks the shape of a resume key: short and plain.
func validResumeKey(k string) error {
	if k == "" || len(k) > MaxResumeKeyLen || strings.Trim(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return invalid("resume key: want 1..%d bytes of [A-Za-z0-9_-]", MaxResumeKeyLen)
	}
	return nil
}

// Validate implements Message.
func (m *Move) Validate() error { return validText("reason", m.Reason, MaxTextLen) }

// validHost checks the shape of a host identity: opaque, short, and
// plain enough to log and compare.
func validHost(h string) error {
	if len(h) > MaxHostLen || strings.Trim(h, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-") != "" {
		return invalid("host identity %q: want at most %d bytes of [A-Za-z0-9._:-]", ClipText(h, 80), MaxHostLen)
	}
	return nil
}

// validFingerprint checks the shape of a certificate fingerprint: a hash
// name, a space and hex bytes with colons; the ranks compare it with
// their peers' SDP.
func validFingerprint(f string) error {
	if f == "" {
		return nil
	}
	if len(f) > MaxFingerprintLen {
		return invalid("fingerprint longer than %d bytes", MaxFingerprintLen)
	}
	alg, val, ok := strings.Cut(f, " ")
	if !ok || alg == "" || val == "" || strings.Trim(alg, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || strings.Trim(val, "0123456789ABCDEF:") != "" {
		return invalid("fingerprint %q: want \"sha-256 AB:CD:…\"", f)
	}
	return nil
}

// Validate implements Message.
func (m *Welcome) Validate() error {
	if m.Protocol != Version {
		return invalid("welcome protocol %d", m.Protocol)
	}
	if err := validJobID(m.Job); err != nil {
		return err
	}
	if err := validSize(m.Size); err != nil {
		return err
	}
	if err := validMax(m.Max, m.Size); err != nil {
		return err
	}
	if m.Rank < 0 || m.Rank >= m.Limit() {
		return invalid("rank %d outside [0, %d)", m.Rank, m.Limit())
	}
	if m.Late != (m.Rank >= m.Size) {
		return invalid("rank %d of a job of size %d with late %v", m.Rank, m.Size, m.Late)
	}
	if m.Resume != "" {
		if err := validResumeKey(m.Resume); err != nil {
			return err
		}
	}
	if len(m.ICEServers) > MaxICEServers {
		return invalid("more than %d ICE servers", MaxICEServers)
	}
	for _, s := range m.ICEServers {
		if err := s.validate(); err != nil {
			return err
		}
	}
	if l := m.Limits; l != nil && (!(l.MessageRate > 0) || math.IsInf(l.MessageRate, 1) || l.MessageBurst < 1 || l.MessageBytes < 1 || l.HeartbeatMillis < 0) {
		return invalid("limits must be positive and finite")
	}
	return validSettings(m.Settings)
}

func (s ICEServer) validate() error {
	if len(s.URLs) == 0 || len(s.URLs) > maxICEURLs {
		return invalid("an ICE server needs 1..%d urls", maxICEURLs)
	}
	for _, u := range s.URLs {
		if u == "" || len(u) > maxICEFieldLen {
			return invalid("ICE server url length")
		}
	}
	if len(s.Username) > maxICEFieldLen || len(s.Credential) > maxICEFieldLen {
		return invalid("ICE server credential length")
	}
	return nil
}

// Validate implements Message.
func (m *Ready) Validate() error {
	if err := validSize(m.Size); err != nil {
		return err
	}
	if err := validMax(m.Max, m.Size); err != nil {
		return err
	}
	if len(m.Kinds) < m.Size || len(m.Kinds) > max(m.Size, m.Max) {
		return invalid("ready has %d kinds for size %d, max %d", len(m.Kinds), m.Size, m.Max)
	}
	for _, k := range m.Kinds {
		if !k.valid() {
			return invalid("client kind %q", k)
		}
	}
	if m.Fingerprints != nil && len(m.Fingerprints) != len(m.Kinds) {
		return invalid("ready has %d fingerprints for %d kinds", len(m.Fingerprints), len(m.Kinds))
	}
	for _, f := range m.Fingerprints {
		if err := validFingerprint(f); err != nil {
			return err
		}
	}
	if m.Hosts != nil && len(m.Hosts) != len(m.Kinds) {
		return invalid("ready has %d hosts for %d kinds", len(m.Hosts), len(m.Kinds))
	}
	for _, h := range m.Hosts {
		if err := validHost(h); err != nil {
			return err
		}
	}
	return nil
}

// Validate implements Message.
func (m *Signal) Validate() error {
	if m.To < 0 || m.To >= MaxJobSize || m.From < 0 || m.From >= MaxJobSize {
		return invalid("signal ranks out of range")
	}
	if !m.Kind.valid() {
		return invalid("signal kind %q", m.Kind)
	}
	if len(m.Payload) == 0 || len(m.Payload) > MaxPayloadLen {
		return invalid("signal payload must have 1..%d bytes", MaxPayloadLen)
	}
	if !validJSON(m.Payload) {
		return invalid("signal payload must be a JSON value other than null")
	}
	return nil
}

// Validate implements Message.
func (m *Abort) Validate() error {
	if m.Code < math.MinInt32 || m.Code > math.MaxInt32 {
		return invalid("abort code %d out of range", m.Code)
	}
	if len(m.Where) > MaxTextLen {
		return invalid("abort place longer than %d bytes", MaxTextLen)
	}
	return nil
}

// Validate implements Message.
func (m *Suspect) Validate() error {
	if m.Rank < 0 || m.Rank >= MaxJobSize {
		return invalid("suspect rank %d out of range", m.Rank)
	}
	if len(m.Reason) > MaxTextLen {
		return invalid("suspect reason longer than %d bytes", MaxTextLen)
	}
	return nil
}

// Validate implements Message.
func (m *Path) Validate() error {
	if m.Peer < 0 || m.Peer >= MaxJobSize {
		return invalid("path to rank %d out of range", m.Peer)
	}
	for _, t := range []string{m.Local, m.Remote} {
		switch t {
		case "host", "srflx", "prflx", "relay", "memory", "shm", "unix":
		default:
			return invalid("candidate type %q", t)
		}
	}
	if m.RTTMicros < 0 {
		return invalid("negative round trip")
	}
	return nil
}

// Validate implements Message.
func (m *Left) Validate() error {
	if m.Rank < 0 || m.Rank >= MaxJobSize {
		return invalid("left rank %d out of range", m.Rank)
	}
	if len(m.Also) >= MaxJobSize {
		return invalid("left lists %d ranks", len(m.Also)+1)
	}
	for _, r := range m.Also {
		if r < 0 || r >= MaxJobSize {
			return invalid("left rank %d out of range", r)
		}
	}
	if len(m.Reason) > MaxTextLen {
		return invalid("reason longer than %d bytes", MaxTextLen)
	}
	return nil
}

// Validate implements Message.
func (m *Error) Validate() error {
	if m.Code == "" || len(m.Code) > 64 {
		return invalid("error code must have 1..64 bytes")
	}
	if len(m.Message) > MaxTextLen {
		return invalid("error message longer than %d bytes", MaxTextLen)
	}
	return nil
}

// Validate implements Message.
func (m *Joined) Validate() error {
	if m.Rank < 0 || m.Rank >= MaxJobSize {
		return invalid("joined rank %d out of range", m.Rank)
	}
	if !m.Kind.valid() {
		return invalid("client kind %q", m.Kind)
	}
	if err := validHost(m.Host); err != nil {
		return err
	}
	return validFingerprint(m.Fingerprint)
}

// validName checks a service name or a port of the name service: 1 to
// MaxNameLen bytes of valid UTF-8.
func validName(what, s string) error {
	if s == "" || len(s) > MaxNameLen {
		return invalid("%s must have 1..%d bytes", what, MaxNameLen)
	}
	if !utf8.ValidString(s) {
		return invalid("%s is not valid UTF-8", what)
	}
	return nil
}

// Validate implements Message.
func (m *Publish) Validate() error {
	if err := validName("service", m.Service); err != nil {
		return err
	}
	return validName("port", m.Port)
}

// Validate implements Message.
func (m *Unpublish) Validate() error { return validName("service", m.Service) }

// Validate implements Message.
func (m *Lookup) Validate() error { return validName("service", m.Service) }

// Validate implements Message.
func (m *Name) Validate() error {
	switch m.Op {
	case TypePublish, TypeUnpublish, TypeLookup:
	default:
		return invalid("name op %q", m.Op)
	}
	if err := validName("service", m.Service); err != nil {
		return err
	}
	switch m.Code {
	case "":
		if m.Message != "" {
			return invalid("name answer with a message but no code")
		}
	case CodeNameTaken, CodeNameUnknown, CodeNameLimit:
	default:
		return invalid("name code %q", m.Code)
	}
	if len(m.Message) > MaxTextLen {
		return invalid("name message longer than %d bytes", MaxTextLen)
	}
	if m.Op == TypeLookup && m.Code == "" {
		return validName("port", m.Port)
	}
	if m.Port != "" {
		return invalid("a port in a name answer other than a found lookup's")
	}
	return nil
}

// Validate implements Message.
func (*Leaving) Validate() error { return nil }

// Validate implements Message.
func (*Ping) Validate() error { return nil }

// Validate implements Message.
func (*Pong) Validate() error { return nil }

// The data objects on the wire, field by field in declaration order, with
// the json tags' names and omitempty rules.

func (m *Join) appendData(b []byte) []byte {
	o := openObject(b)
	o.str("job", m.Job)
	o.str("token", m.Token)
	if m.Rank != nil {
		o.int("rank", *m.Rank)
	}
	o.str("kind", string(m.Kind))
	if m.Fingerprint != "" {
		o.str("fingerprint", m.Fingerprint)
	}
	if m.Host != "" {
		o.str("host", m.Host)
	}
	if m.Agent != "" {
		o.str("agent", m.Agent)
	}
	if m.Resume != "" {
		o.str("resume", m.Resume)
	}
	return o.close()
}

func (m *Move) appendData(b []byte) []byte {
	o := openObject(b)
	if m.Reason != "" {
		o.str("reason", m.Reason)
	}
	return o.close()
}

func (m *Move) field(r *jsonReader, key string) (bool, error) {
	if key != "reason" {
		return false, nil
	}
	return true, r.str(&m.Reason)
}

func (m *Join) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "job":
		return true, r.str(&m.Job)
	case "token":
		return true, r.str(&m.Token)
	case "rank":
		return true, r.optInt(&m.Rank)
	case "kind":
		return true, r.str((*string)(&m.Kind))
	case "fingerprint":
		return true, r.str(&m.Fingerprint)
	case "host":
		return true, r.str(&m.Host)
	case "agent":
		return true, r.str(&m.Agent)
	case "resume":
		return true, r.str(&m.Resume)
	}
	return false, nil
}

func (m *Welcome) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "protocol":
		return true, r.int(&m.Protocol)
	case "job":
		return true, r.str(&m.Job)
	case "rank":
		return true, r.int(&m.Rank)
	case "size":
		return true, r.int(&m.Size)
	case "iceServers":
		if r.null() {
			return true, nil
		}
		m.ICEServers = []ICEServer{}
		return true, r.array(func() error {
			var s ICEServer
			err := r.fields(s.field)
			m.ICEServers = append(m.ICEServers, s)
			return err
		})
	case "settings":
		if r.null() {
			return true, nil
		}
		m.Settings = map[string]string{}
		return true, r.object(func(k string) error {
			if _, dup := m.Settings[k]; dup {
				return r.syntaxError("repeated setting %q", k)
			}
			var v string
			err := r.str(&v)
			m.Settings[k] = v
			return err
		})
	case "limits":
		if r.null() {
			return true, nil
		}
		m.Limits = new(Limits)
		return true, r.fields(m.Limits.field)
	case "max":
		return true, r.int(&m.Max)
	case "late":
		return true, r.bool(&m.Late)
	case "resume":
		return true, r.str(&m.Resume)
	case "resumed":
		return true, r.bool(&m.Resumed)
	}
	return false, nil
}

func (s *ICEServer) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "urls":
		return true, readStrings(r, &s.URLs)
	case "username":
		return true, r.str(&s.Username)
	case "credential":
		return true, r.str(&s.Credential)
	}
	return false, nil
}

func (l *Limits) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "messageRate":
		return true, r.float64(&l.MessageRate)
	case "messageBurst":
		return true, r.int(&l.MessageBurst)
	case "heartbeatMillis":
		return true, r.int(&l.HeartbeatMillis)
	case "messageBytes":
		return true, r.int(&l.MessageBytes)
	}
	return false, nil
}

func (m *Ready) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "size":
		return true, r.int(&m.Size)
	case "kinds":
		return true, readStrings(r, &m.Kinds)
	case "fingerprints":
		return true, readStrings(r, &m.Fingerprints)
	case "hosts":
		return true, readStrings(r, &m.Hosts)
	case "max":
		return true, r.int(&m.Max)
	}
	return false, nil
}

func (m *Joined) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "rank":
		return true, r.int(&m.Rank)
	case "kind":
		return true, r.str((*string)(&m.Kind))
	case "fingerprint":
		return true, r.str(&m.Fingerprint)
	case "host":
		return true, r.str(&m.Host)
	}
	return false, nil
}

func (m *Signal) appendData(b []byte) []byte {
	o := openObject(b)
	o.int("to", m.To)
	o.int("from", m.From)
	o.str("kind", string(m.Kind))
	o.raw("payload", m.Payload)
	return o.close()
}

func (m *Signal) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "to":
		return true, r.int(&m.To)
	case "from":
		return true, r.int(&m.From)
	case "kind":
		return true, r.str((*string)(&m.Kind))
	case "payload":
		if r.null() {
			return true, nil // Validate rejects the missing payload
		}
		v, err := r.value()
		m.Payload = slices.Clone(v)
		return true, err
	}
	return false, nil
}

func (m *Left) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "rank":
		return true, r.int(&m.Rank)
	case "reason":
		return true, r.str(&m.Reason)
	case "also":
		return true, readInts(r, &m.Also)
	case "aborted":
		return true, r.bool(&m.Aborted)
	case "code":
		return true, r.int(&m.Code)
	}
	return false, nil
}

func (m *Abort) appendData(b []byte) []byte {
	o := openObject(b)
	o.int("code", m.Code)
	if m.Where != "" {
		o.str("where", m.Where)
	}
	return o.close()
}

func (m *Abort) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "code":
		return true, r.int(&m.Code)
	case "where":
		return true, r.str(&m.Where)
	}
	return false, nil
}

func (m *Suspect) appendData(b []byte) []byte {
	o := openObject(b)
	o.int("rank", m.Rank)
	if m.Reason != "" {
		o.str("reason", m.Reason)
	}
	return o.close()
}

func (m *Suspect) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "rank":
		return true, r.int(&m.Rank)
	case "reason":
		return true, r.str(&m.Reason)
	}
	return false, nil
}

func (*Leaving) appendData(b []byte) []byte {
	o := openObject(b)
	return o.close()
}

func (*Leaving) field(*jsonReader, string) (bool, error) { return false, nil }

func (m *Path) appendData(b []byte) []byte {
	o := openObject(b)
	o.int("peer", m.Peer)
	o.str("local", m.Local)
	o.str("remote", m.Remote)
	if m.RTTMicros != 0 {
		o.int("rttMicros", m.RTTMicros)
	}
	return o.close()
}

func (m *Path) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "peer":
		return true, r.int(&m.Peer)
	case "local":
		return true, r.str(&m.Local)
	case "remote":
		return true, r.str(&m.Remote)
	case "rttMicros":
		return true, r.int(&m.RTTMicros)
	}
	return false, nil
}

func (m *Publish) appendData(b []byte) []byte {
	o := openObject(b)
	o.str("service", m.Service)
	o.str("port", m.Port)
	return o.close()
}

func (m *Publish) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "service":
		return true, r.str(&m.Service)
	case "port":
		return true, r.str(&m.Port)
	}
	return false, nil
}

func (m *Unpublish) appendData(b []byte) []byte {
	o := openObject(b)
	o.str("service", m.Service)
	return o.close()
}

func (m *Unpublish) field(r *jsonReader, key string) (bool, error) {
	if key != "service" {
		return false, nil
	}
	return true, r.str(&m.Service)
}

func (m *Lookup) appendData(b []byte) []byte {
	o := openObject(b)
	o.str("service", m.Service)
	if m.Wait {
		o.bool("wait", true)
	}
	return o.close()
}

func (m *Lookup) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "service":
		return true, r.str(&m.Service)
	case "wait":
		return true, r.bool(&m.Wait)
	}
	return false, nil
}

func (m *Name) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "op":
		return true, r.str((*string)(&m.Op))
	case "service":
		return true, r.str(&m.Service)
	case "port":
		return true, r.str(&m.Port)
	case "code":
		return true, r.str((*string)(&m.Code))
	case "message":
		return true, r.str(&m.Message)
	}
	return false, nil
}

func (m *Error) field(r *jsonReader, key string) (bool, error) {
	switch key {
	case "code":
		return true, r.str((*string)(&m.Code))
	case "message":
		return true, r.str(&m.Message)
	}
	return false, nil
}

func (m *Ping) appendData(b []byte) []byte { return appendID(b, m.ID) }
func (m *Pong) appendData(b []byte) []byte { return appendID(b, m.ID) }

func appendID(b []byte, id uint64) []byte {
	o := openObject(b)
	if id != 0 {
		o.key("id")
		o.b = strconv.AppendUint(o.b, id, 10)
	}
	return o.close()
}

func (m *Ping) field(r *jsonReader, key string) (bool, error) { return idField(r, key, &m.ID) }
func (m *Pong) field(r *jsonReader, key string) (bool, error) { return idField(r, key, &m.ID) }

func idField(r *jsonReader, key string, id *uint64) (bool, error) {
	if key != "id" {
		return false, nil
	}
	return true, r.uint64(id)
}

func newMessage(t Type) Message {
	switch t {
	case TypeJoin:
		return new(Join)
	case TypeWelcome:
		return new(Welcome)
	case TypeReady:
		return new(Ready)
	case TypeSignal:
		return new(Signal)
	case TypeLeft:
		return new(Left)
	case TypeError:
		return new(Error)
	case TypePing:
		return new(Ping)
	case TypePong:
		return new(Pong)
	case TypePath:
		return new(Path)
	case TypeAbort:
		return new(Abort)
	case TypeSuspect:
		return new(Suspect)
	case TypeLeaving:
		return new(Leaving)
	case TypeJoined:
		return new(Joined)
	case TypeMove:
		return new(Move)
	case TypePublish:
		return new(Publish)
	case TypeUnpublish:
		return new(Unpublish)
	case TypeLookup:
		return new(Lookup)
	case TypeName:
		return new(Name)
	case TypeTelemetry:
		return new(Telemetry)
	}
	return nil
}

// Decode parses and validates one message. Its errors wrap ErrTooLarge,
// ErrMalformed, ErrVersion, ErrUnknownType or ErrInvalid.
func Decode(data []byte) (Message, error) {
	if len(data) > MaxMessageBytes {
		return nil, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, len(data), MaxMessageBytes)
	}
	// the envelope: {"v": 1, "type": "<type>", "data": {...}}, in any
	// order. In Encode's order (v, type, data) the data is decoded where
	// it stands, in one pass; else it is checked, kept, and decoded once
	// the type is known.
	var (
		v       int
		typ     string
		vSeen   bool
		typSeen bool
		m       Message // decoded in the envelope's pass
		dataErr error   // m's error
		payload []byte  // data, checked; decoded after the envelope
	)
	r := jsonReader{data: data}
	err := r.fields(func(r *jsonReader, key string) (bool, error) {
		switch key {
		case "v":
			vSeen = true
			return true, r.int(&v)
		case "type":
			typSeen = true
			return true, r.str(&typ)
		case "data":
			if r.null() {
				return true, nil
			}
			if vSeen && typSeen && v == Version {
				if m = newMessage(Type(typ)); m != nil {
					dataErr = r.fields(m.field)
					return true, dataErr
				}
			}
			var err error
			payload, err = r.value()
			return true, err
		}
		return false, nil
	})
	if err == nil {
		err = r.end()
	}
	if err != nil {
		if dataErr != nil {
			return nil, fmt.Errorf("%w: %s data: %v", ErrMalformed, typ, dataErr)
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if v != Version {
		return nil, fmt.Errorf("%w: %d (want %d)", ErrVersion, v, Version)
	}
	if m == nil {
		if m = newMessage(Type(typ)); m == nil {
			return nil, fmt.Errorf("%w: %q", ErrUnknownType, typ)
		}
		if payload != nil {
			r = jsonReader{data: payload}
			if err := r.fields(m.field); err != nil {
				return nil, fmt.Errorf("%w: %s data: %v", ErrMalformed, typ, err)
			}
		}
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	return m, nil
}

// Encode validates m and returns its wire form. Under GOOS=js it encodes
// only what a client sends (join, signal, path, abort, suspect, leaving,
// publish, unpublish, lookup, telemetry, ping, pong): the encoders of the server's messages stay out of browser
// ranks (proto_server.go).
func Encode(m Message) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil message", ErrInvalid)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Type(), err)
	}
	if !encodable(m) {
		return nil, fmt.Errorf("encode %s: %w: the server's messages are not encoded under js", m.Type(), ErrInvalid)
	}
	b := append(make([]byte, 0, 64), `{"v":`...)
	b = strconv.AppendInt(b, Version, 10)
	b = append(b, `,"type":`...)
	b = appendString(b, string(m.Type()))
	b = append(b, `,"data":`...)
	b = append(m.appendData(b), '}')
	if len(b) > MaxMessageBytes {
		return nil, fmt.Errorf("encode %s: %w", m.Type(), ErrTooLarge)
	}
	return b, nil
}
