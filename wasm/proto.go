package wasm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/meshmpi/meshmpi/peer"
)

// Version is the guest↔host protocol version this package speaks. Both
// sides send theirs first (HostHello, Join); a mismatch is refused with a
// message naming both, never guessed around.
const Version = 1

// Protocol limits.
const (
	// MaxMessage bounds a message's length field (type byte and body): a
	// Data message carries one frame of at most MaxFrame bytes plus its
	// rank, and the other messages are far smaller. A longer length is a
	// protocol error, so a broken peer cannot make the reader size
	// anything absurd.
	MaxMessage = 1 + 4 + MaxFrame
	// MaxFrame is the largest frame a hosted link carries: a WebRTC data
	// channel's largest message (peer.MaxWebRTCFrame).
	MaxFrame = 65535
	// KeyLen is the length of the key a socket stream's two ends prove
	// themselves with: the host presents the first half in its hello,
	// the guest the second half in its join. A process that took the
	// listener's port first learns only the host's half and cannot join
	// the job as the guest; one that connects to the guest first cannot
	// present the host's half.
	KeyLen  = 32
	halfKey = KeyLen / 2
	// maxText bounds a reason or a setting's key or value.
	maxText = 4096
	// maxSettings bounds a welcome's settings.
	maxSettings = 256
)

// ErrProtocol means the other side of the guest↔host stream broke the
// protocol: a length out of bounds, an unknown message type, a body of the
// wrong size, a rank out of range. The stream is closed.
var ErrProtocol = errors.New("wasm: guest/host protocol violation")

// MsgType is the type of a message on the guest↔host stream.
type MsgType uint8

// Message types; the direction is host → guest (H→G), guest → host (G→H)
// or both.
const (
	// MsgHostHello (H→G) opens the stream: the host's version and the
	// host's half of the key (zero on a stream no one else can reach).
	MsgHostHello MsgType = 1 + iota
	// MsgJoin (G→H) answers the hello: the guest's version and its half of
	// the key. The host joins the job for the guest, then answers Welcome
	// or Refused.
	MsgJoin
	// MsgWelcome (H→G): the guest's rank, the world's size and the job's
	// settings, once every rank of the job is present.
	MsgWelcome
	// MsgRefused (H→G): the job could not be joined; the reason. The host
	// closes the stream after it.
	MsgRefused
	// MsgConnect (G→H): open a link to a rank (the guest's peer.Dialer).
	// The host answers LinkUp or LinkDown.
	MsgConnect
	// MsgLinkUp (H→G): a link to a rank is open (dialed by the guest or
	// by the remote): its largest frame and the bytes the guest may have
	// in flight on it before credit returns.
	MsgLinkUp
	// MsgLinkDown (H→G): a rank cannot be reached any more: a dial failed,
	// the link was lost, or the rank left the job (Cause says which).
	MsgLinkDown
	// MsgClose (G→H): the guest closed its link to a rank.
	MsgClose
	// MsgData (both): one frame on the link to (G→H) or from (H→G) a rank.
	MsgData
	// MsgCredit (both): the receiver consumed this many bytes of a link's
	// frames; the sender may have that much more in flight.
	MsgCredit
	// MsgAbort (both): a rank called Abort: its rank, code and where
	// (G→H: the guest did, and the host tells the job; H→G: another rank
	// did, and the job is over).
	MsgAbort
	msgEnd
)

var msgNames = [msgEnd]string{MsgHostHello: "host-hello", MsgJoin: "join", MsgWelcome: "welcome",
	MsgRefused: "refused", MsgConnect: "connect", MsgLinkUp: "link-up", MsgLinkDown: "link-down",
	MsgClose: "close", MsgData: "data", MsgCredit: "credit", MsgAbort: "abort"}

// String returns the type's protocol name.
func (t MsgType) String() string {
	if t > 0 && t < msgEnd {
		return msgNames[t]
	}
	return fmt.Sprintf("msg(%d)", uint8(t))
}

// Cause says why a LinkDown came.
type Cause uint8

// Causes of LinkDown.
const (
	// CauseDialFailed: the host could not connect to the rank.
	CauseDialFailed Cause = 1 + iota
	// CauseLinkLost: the open link failed or the remote closed it.
	CauseLinkLost
	// CauseLeft: the signaling server announced the rank's departure.
	CauseLeft
	causeEnd
)

// Msg is a decoded message. Which fields are set depends on Type; Frame
// aliases the reader's buffer and is valid until the next read.
type Msg struct {
	Type     MsgType
	Version  uint16
	Key      [halfKey]byte // HostHello, Join
	Rank     int           // the remote rank (Connect … Credit), or the guest's (Welcome)
	Size     int           // Welcome
	N        uint32        // LinkUp: max frame; Credit: bytes
	Window   uint32        // LinkUp
	Cause    Cause         // LinkDown
	Code     int           // Abort
	Text     string        // Refused, LinkDown, Abort (where)
	Settings map[string]string
	Frame    []byte // Data
}

// Message layout: every message is a little-endian length (of what
// follows it), a type byte and the type's body:
//
//	+---------------+------+-----------------------------+
//	|  length (u32) | type | body (length-1 bytes)       |
//	+---------------+------+-----------------------------+
//
//	host-hello  version u16, key [16] (the key's first half)
//	join        version u16, key [16] (the key's second half)
//	welcome     rank u32, size u32, count u16, count × (key str, value str)
//	refused     reason str
//	connect     rank u32
//	link-up     rank u32, max frame u32, window u32
//	link-down   rank u32, cause u8, reason str
//	close       rank u32
//	data        rank u32, frame (the rest)
//	credit      rank u32, bytes u32
//
// where str is a u16 length and that many bytes of UTF-8.
const prefixLen = 4

// appendPrefix starts a message of type t whose body is n bytes.
func appendPrefix(b []byte, t MsgType, n int) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(1+n))
	return append(b, byte(t))
}

func appendStr(b []byte, s string) []byte {
	if len(s) > maxText {
		s = s[:maxText]
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// AppendHostHello appends a host-hello with key's first half.
func AppendHostHello(b []byte, key [KeyLen]byte) []byte {
	b = appendPrefix(b, MsgHostHello, 2+halfKey)
	b = binary.LittleEndian.AppendUint16(b, Version)
	return append(b, key[:halfKey]...)
}

// AppendJoin appends a join with key's second half.
func AppendJoin(b []byte, key [KeyLen]byte) []byte {
	b = appendPrefix(b, MsgJoin, 2+halfKey)
	b = binary.LittleEndian.AppendUint16(b, Version)
	return append(b, key[halfKey:]...)
}

// AppendWelcome appends a welcome; settings go in key order, and at most
// maxSettings of them with keys and values of at most maxText bytes (the
// signaling server's bounds are tighter).
func AppendWelcome(b []byte, rank, size int, settings map[string]string) []byte {
	keys := slices.Sorted(maps.Keys(settings))
	if len(keys) > maxSettings {
		keys = keys[:maxSettings]
	}
	n := 4 + 4 + 2
	for _, k := range keys {
		n += 2 + min(len(k), maxText) + 2 + min(len(settings[k]), maxText)
	}
	b = appendPrefix(b, MsgWelcome, n)
	b = binary.LittleEndian.AppendUint32(b, uint32(rank))
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(keys)))
	for _, k := range keys {
		b = appendStr(appendStr(b, k), settings[k])
	}
	return b
}

// AppendRefused appends a refusal.
func AppendRefused(b []byte, reason string) []byte {
	b = appendPrefix(b, MsgRefused, 2+min(len(reason), maxText))
	return appendStr(b, reason)
}

// appendRank appends a message whose body is a rank and then extra bytes.
func appendRank(b []byte, t MsgType, rank, extra int) []byte {
	b = appendPrefix(b, t, 4+extra)
	return binary.LittleEndian.AppendUint32(b, uint32(rank))
}

// AppendConnect appends a connect request for rank.
func AppendConnect(b []byte, rank int) []byte { return appendRank(b, MsgConnect, rank, 0) }

// AppendClose appends a close of the link to rank.
func AppendClose(b []byte, rank int) []byte { return appendRank(b, MsgClose, rank, 0) }

// AppendLinkUp appends a link-up.
func AppendLinkUp(b []byte, rank, maxFrame, window int) []byte {
	b = appendRank(b, MsgLinkUp, rank, 8)
	b = binary.LittleEndian.AppendUint32(b, uint32(maxFrame))
	return binary.LittleEndian.AppendUint32(b, uint32(window))
}

// AppendLinkDown appends a link-down.
func AppendLinkDown(b []byte, rank int, c Cause, reason string) []byte {
	b = appendRank(b, MsgLinkDown, rank, 1+2+min(len(reason), maxText))
	b = append(b, byte(c))
	return appendStr(b, reason)
}

// AppendData appends a data message carrying the frame hdr+payload.
func AppendData(b []byte, rank int, hdr, payload []byte) []byte {
	b = appendRank(b, MsgData, rank, len(hdr)+len(payload))
	return append(append(b, hdr...), payload...)
}

// AppendCredit appends a credit of n bytes for the link to rank.
func AppendCredit(b []byte, rank, n int) []byte {
	b = appendRank(b, MsgCredit, rank, 4)
	return binary.LittleEndian.AppendUint32(b, uint32(n))
}

// AppendAbort appends an abort by rank with code, called at where.
func AppendAbort(b []byte, rank, code int, where string) []byte {
	b = appendRank(b, MsgAbort, rank, 4+2+min(len(where), maxText))
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(code)))
	return appendStr(b, where)
}

// Decode decodes one message from its type byte and body. The ranks it
// returns are whatever the message says; the receiver checks them against
// its world. Data's Frame aliases body.
func Decode(t MsgType, body []byte) (Msg, error) {
	m := Msg{Type: t}
	d := decoder{b: body}
	switch t {
	case MsgHostHello, MsgJoin:
		m.Version = d.u16()
		copy(m.Key[:], d.bytes(halfKey))
	case MsgWelcome:
		m.Rank, m.Size = d.rank(), d.rank()
		n := int(d.u16())
		if n > maxSettings {
			return m, fmt.Errorf("%w: welcome with %d settings", ErrProtocol, n)
		}
		m.Settings = make(map[string]string, n)
		for range n {
			k, v := d.str(), d.str()
			m.Settings[k] = v
		}
		if d.err == nil && len(m.Settings) != n {
			return m, fmt.Errorf("%w: welcome repeats a setting", ErrProtocol)
		}
		if d.err == nil && (m.Size < 1 || m.Rank >= m.Size) {
			return m, fmt.Errorf("%w: welcome to rank %d of %d", ErrProtocol, m.Rank, m.Size)
		}
	case MsgRefused:
		m.Text = d.str()
	case MsgConnect, MsgClose:
		m.Rank = d.rank()
	case MsgLinkUp:
		m.Rank, m.N, m.Window = d.rank(), d.u32(), d.u32()
		if d.err == nil && (m.N <= peer.HeaderLen || m.N > MaxFrame || m.Window < m.N) {
			return m, fmt.Errorf("%w: link-up with %d-byte frames and a %d-byte window", ErrProtocol, m.N, m.Window)
		}
	case MsgLinkDown:
		m.Rank = d.rank()
		m.Cause = Cause(d.u8())
		m.Text = d.str()
		if d.err == nil && (m.Cause == 0 || m.Cause >= causeEnd) {
			return m, fmt.Errorf("%w: link-down cause %d", ErrProtocol, m.Cause)
		}
	case MsgData:
		m.Rank = d.rank()
		m.Frame = d.rest()
		if d.err == nil && len(m.Frame) == 0 {
			return m, fmt.Errorf("%w: empty data message", ErrProtocol)
		}
	case MsgCredit:
		m.Rank, m.N = d.rank(), d.u32()
	case MsgAbort:
		m.Rank, m.Code = d.rank(), int(int32(d.u32()))
		m.Text = d.str()
	default:
		return m, fmt.Errorf("%w: unknown message type %d", ErrProtocol, t)
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes too many", len(d.b))
	}
	if d.err != nil {
		return m, fmt.Errorf("%w: %v message: %w", ErrProtocol, t, d.err)
	}
	return m, nil
}

// decoder reads a body's fields, recording the first shortfall.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.err = fmt.Errorf("%d bytes short", n-len(d.b))
		d.b = nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8() uint8 {
	if v := d.bytes(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if v := d.bytes(2); v != nil {
		return binary.LittleEndian.Uint16(v)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if v := d.bytes(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

// rank reads a u32 rank; ranks above the largest job are errors here, so
// no int conversion surprises later.
func (d *decoder) rank() int {
	r := d.u32()
	if r > maxRank && d.err == nil {
		d.err = fmt.Errorf("rank %d out of range", r)
	}
	return int(r)
}

// maxRank bounds a rank on the wire (the signaling server's jobs are far
// smaller).
const maxRank = 1 << 20

func (d *decoder) str() string {
	n := int(d.u16())
	if n > maxText && d.err == nil {
		d.err = fmt.Errorf("%d-byte string", n)
	}
	return string(d.bytes(n))
}

func (d *decoder) rest() []byte {
	v := d.b
	d.b = nil
	return v
}

// Reader reads messages from a stream into one reused buffer.
type Reader struct {
	r   io.Reader
	pre [prefixLen]byte
	buf []byte
}

// NewReader returns a Reader of r; r should be buffered.
func NewReader(r io.Reader) *Reader { return &Reader{r: r, buf: make([]byte, 0, 4096)} }

// Next reads and decodes the next message. A clean end of the stream
// between messages is io.EOF; anything else that is not a whole valid
// message wraps ErrProtocol or is the stream's error.
func (r *Reader) Next() (Msg, error) {
	if _, err := io.ReadFull(r.r, r.pre[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: stream ends inside a length", ErrProtocol)
		}
		return Msg{}, err
	}
	n := int(binary.LittleEndian.Uint32(r.pre[:]))
	if n < 1 || n > MaxMessage {
		return Msg{}, fmt.Errorf("%w: message length %d (want 1 … %d)", ErrProtocol, n, MaxMessage)
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n, max(n, 2*cap(r.buf)))
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: stream ends inside a %d-byte message", ErrProtocol, n)
		}
		return Msg{}, err
	}
	return Decode(MsgType(b[0]), b[1:])
}
