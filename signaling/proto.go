package signaling

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Version is the protocol version this package speaks; every envelope carries it.
const Version = 1

// MaxMessageBytes is the hard upper bound on one encoded message. A server may
// be configured with a lower limit, never a higher one.
const MaxMessageBytes = 1 << 20

// Field bounds checked by Validate.
const (
	MaxJobIDLen    = 128      // bytes in a job id
	MaxTokenLen    = 4096     // bytes in a token
	MaxJobSize     = 1 << 16  // ranks in one job
	MaxSettings    = 256      // entries in a job's settings
	MaxSettingLen  = 1024     // bytes in one settings key or value
	MaxICEServers  = 16       // ICE servers in a welcome
	MaxPayloadLen  = 64 << 10 // bytes of one signal payload
	MaxTextLen     = 1024     // bytes of an error message or reason
	maxICEURLs     = 16
	maxICEFieldLen = 1024
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
)

func (k SignalKind) valid() bool {
	return k == SignalOffer || k == SignalAnswer || k == SignalCandidate || k == SignalConnect
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
	CodeTooManyJobs  ErrorCode = "too-many-jobs"  // server job limit
	CodeTooManyConns ErrorCode = "too-many-conns" // server connection limit
	CodeJoinTimeout  ErrorCode = "join-timeout"   // no join in time
	CodeSlowConsumer ErrorCode = "slow-consumer"  // outbound queue overflowed
	CodeShutdown     ErrorCode = "shutdown"       // server is shutting down
	CodeRankAbsent   ErrorCode = "rank-absent"    // signal to a rank not present (not fatal)
	CodeInternal     ErrorCode = "internal"       // server bug
)

// Message is one protocol message. The concrete types are *Join, *Welcome,
// *Ready, *Signal, *Left, *Error, *Ping and *Pong.
type Message interface {
	// Type is the message's wire type.
	Type() Type
	// Validate reports a missing or out-of-range field, wrapping ErrInvalid.
	Validate() error
}

// Join is the first message a client sends.
type Join struct {
	Job   string     `json:"job"`
	Token string     `json:"token"`
	Rank  *int       `json:"rank,omitempty"` // requested rank; nil for the next free one
	Kind  ClientKind `json:"kind"`
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
}

// Limits are the server's limits on a connection, told to the client so it
// can stay inside them.
type Limits struct {
	MessageRate  float64 `json:"messageRate"`  // messages per second
	MessageBurst int     `json:"messageBurst"` // token-bucket depth
	MessageBytes int     `json:"messageBytes"` // largest message
}

// ICEServer is one STUN or TURN server, in the shape of WebRTC's RTCIceServer.
type ICEServer struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username,omitempty"`
	Credential string   `json:"credential,omitempty"`
}

// Ready tells every rank that all Size ranks are present. Kinds[r] is rank r's
// client kind.
type Ready struct {
	Size  int          `json:"size"`
	Kinds []ClientKind `json:"kinds"`
}

// Signal carries an SDP offer/answer or an ICE candidate between two ranks of
// one job. The server overwrites From with the sender's rank.
type Signal struct {
	To      int             `json:"to"`
	From    int             `json:"from"`
	Kind    SignalKind      `json:"kind"`
	Payload json.RawMessage `json:"payload"` // any JSON value (a string or an object), opaque to the server
}

// Left announces that a rank's connection is gone.
type Left struct {
	Rank   int    `json:"rank"`
	Reason string `json:"reason,omitempty"`
}

// Error reports a failure. It is followed by a close unless Code is CodeRankAbsent.
type Error struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message,omitempty"`
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
	if m.Rank < 0 || m.Rank >= m.Size {
		return invalid("rank %d outside [0, %d)", m.Rank, m.Size)
	}
	if len(m.ICEServers) > MaxICEServers {
		return invalid("more than %d ICE servers", MaxICEServers)
	}
	for _, s := range m.ICEServers {
		if err := s.validate(); err != nil {
			return err
		}
	}
	if l := m.Limits; l != nil && (l.MessageRate <= 0 || l.MessageBurst < 1 || l.MessageBytes < 1) {
		return invalid("limits must be positive")
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
	if len(m.Kinds) != m.Size {
		return invalid("ready has %d kinds for size %d", len(m.Kinds), m.Size)
	}
	for _, k := range m.Kinds {
		if !k.valid() {
			return invalid("client kind %q", k)
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
	if !json.Valid(m.Payload) || bytes.Equal(bytes.TrimSpace(m.Payload), []byte("null")) {
		return invalid("signal payload must be a JSON value other than null")
	}
	return nil
}

// Validate implements Message.
func (m *Left) Validate() error {
	if m.Rank < 0 || m.Rank >= MaxJobSize {
		return invalid("left rank %d out of range", m.Rank)
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
func (*Ping) Validate() error { return nil }

// Validate implements Message.
func (*Pong) Validate() error { return nil }

// envelope is the wire form of every message.
type envelope struct {
	V    int             `json:"v"`
	Type Type            `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
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
	}
	return nil
}

// strictUnmarshal decodes exactly one JSON value with no unknown fields.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Decode parses and validates one message. Its errors wrap ErrTooLarge,
// ErrMalformed, ErrVersion, ErrUnknownType or ErrInvalid.
func Decode(data []byte) (Message, error) {
	if len(data) > MaxMessageBytes {
		return nil, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, len(data), MaxMessageBytes)
	}
	var env envelope
	if err := strictUnmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if env.V != Version {
		return nil, fmt.Errorf("%w: %d (want %d)", ErrVersion, env.V, Version)
	}
	m := newMessage(env.Type)
	if m == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownType, env.Type)
	}
	data = bytes.TrimSpace(env.Data)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		data = []byte("{}")
	}
	if err := strictUnmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%w: %s data: %v", ErrMalformed, env.Type, err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", env.Type, err)
	}
	return m, nil
}

// Encode validates m and returns its wire form.
func Encode(m Message) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil message", ErrInvalid)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Type(), err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Type(), err)
	}
	out, err := json.Marshal(envelope{V: Version, Type: m.Type(), Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Type(), err)
	}
	if len(out) > MaxMessageBytes {
		return nil, fmt.Errorf("encode %s: %w", m.Type(), ErrTooLarge)
	}
	return out, nil
}
