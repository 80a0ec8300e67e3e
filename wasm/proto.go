package wasm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/meshmpi/meshmpi/peer"
)

// Version is the guest↔host protocol version this package speaks. Both
// sides send theirs first (HostHello, Join); a mismatch is refused with a
// message naming both, never guessed around. Version 2 added the job's
// growth limit and the late flag to welcome, and the name service's
// messages (name, name-answer, name-cancel). Version 3 raised MaxFrame
// from 65,535 bytes to a 1 MiB payload and its header: a version 2 guest
// refuses a link-up with such frames and any message longer than its
// MaxMessage, so the two cannot be mixed. Version 4 added evicted: a
// version 3 guest would take it for a broken host, lose every peer and
// go on as a job of one, which is what the message prevents.
const Version = 4

// Protocol limits.
const (
	// MaxMessage bounds a message's length field (type byte and body): a
	// Data message carries one frame of at most MaxFrame bytes plus its
	// rank, and the other messages are far smaller. A longer length is a
	// protocol error, so a broken peer cannot make the reader size
	// anything absurd.
	MaxMessage = 1 + 4 + MaxFrame
	// MaxFrame is the largest frame a hosted link carries, header
	// included: a 1 MiB payload in one frame, so a 1 MiB message
	// crosses the guest↔host hop once, not in 17 frames of 64 KiB (each
	// hop costs the guest a wake-up and a host call or two, some 100 µs
	// on the loaded development machine). A link carries the smaller of
	// it and the real link's own (a WebRTC data channel's is
	// peer.MaxWebRTCFrame). It costs each guest a read buffer and a
	// write buffer of this size, grown only when a frame needs them.
	MaxFrame = 1<<20 + peer.HeaderLen
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
	// MaxName bounds a service name or a port name of the name service
	// (Guest.Publish, Lookup): longer ones are refused before they are
	// sent, and a name message carrying one is a protocol error.
	MaxName = 256
	// MaxNameRequests bounds the name requests a guest has outstanding
	// (sent, neither answered nor cancelled): the guest's further calls
	// wait for one to end, and a host that sees more is owed a protocol
	// error, so a broken guest cannot make its host wait on the server
	// without bound.
	MaxNameRequests = 64
)

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
	// MsgName (G→H): a request to the job's name service (NameOp: publish,
	// unpublish or look up a service), with the guest's id for it. The
	// host answers NameAnswer with the same id, unless the guest
	// cancelled it first.
	MsgName
	// MsgNameAnswer (H→G): how a name request ended (NameClass) and its
	// text: a lookup's port, or what went wrong.
	MsgNameAnswer
	// MsgNameCancel (G→H): the guest gave up on a name request (its
	// context ended): the host stops waiting for the server and does not
	// answer. One that crosses the answer is dropped by each side.
	MsgNameCancel
	// MsgReportReady (G→H): the guest answers report (sent once, after
	// the welcome, only when the host offered OfferReport).
	MsgReportReady
	// MsgReport (H→G): print what the rank is blocked in, as the rank's
	// --timeout report does, on its standard error, and carry on. Sent
	// only to a guest that said report-ready.
	MsgReport
	// MsgTelemetry (G→H): operations the rank completed, and how many it
	// dropped, for the host to report to the signaling server with the
	// links and the console it sees itself (the job's telemetry setting).
	// Sent only when the host offered OfferTelemetry.
	MsgTelemetry
	// MsgEvicted (H→G): the job declared this rank failed and went on
	// without it (a peer lost its link to it, or it stopped answering
	// pings: it was frozen or cut off), or the job ended under it; the
	// reason. The guest ends as an evicted native rank does: its
	// endpoint closes with the reason, and a process that is the rank
	// exits saying so. It comes instead of every other rank's
	// departure, after which a fault-tolerant program would go on alone.
	MsgEvicted
	msgEnd
)

var msgNames = [msgEnd]string{MsgHostHello: "host-hello", MsgJoin: "join", MsgWelcome: "welcome",
	MsgRefused: "refused", MsgConnect: "connect", MsgLinkUp: "link-up", MsgLinkDown: "link-down",
	MsgClose: "close", MsgData: "data", MsgCredit: "credit", MsgAbort: "abort",
	MsgName: "name", MsgNameAnswer: "name-answer", MsgNameCancel: "name-cancel",
	MsgReportReady: "report-ready", MsgReport: "report", MsgTelemetry: "telemetry", MsgEvicted: "evicted"}

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

// NameOp is what a name request asks of the job's name service.
type NameOp uint8

// Name service operations (MPI_Publish_name, MPI_Unpublish_name,
// MPI_Lookup_name).
const (
	// NamePublish publishes a port under a service name.
	NamePublish NameOp = 1 + iota
	// NameUnpublish withdraws a service name this rank published.
	NameUnpublish
	// NameLookup waits until a service is published and answers its port.
	NameLookup
	nameOpEnd
)

// NameClass is how a name request ended, as a name-answer says: the
// host's error class, which the guest turns back into ErrNameTaken,
// ErrNameUnknown or ErrNameLimit.
type NameClass uint8

var nameOpNames = [nameOpEnd]string{NamePublish: "publish", NameUnpublish: "unpublish", NameLookup: "lookup"}

// String returns the operation's name.
func (op NameOp) String() string {
	if op > 0 && op < nameOpEnd {
		return nameOpNames[op]
	}
	return fmt.Sprintf("name-op(%d)", uint8(op))
}

// Classes of a name-answer.
const (
	// NameOK: done; a lookup's answer carries the port.
	NameOK NameClass = 1 + iota
	// NameTaken: publish of a service someone published already.
	NameTaken
	// NameUnknown: unpublish of a service that is not published.
	NameUnknown
	// NameLimit: the job has as many names as the server keeps.
	NameLimit
	// NameFailed: anything else (the host lost its signaling server,
	// say); the text says what.
	NameFailed
	nameClassEnd
)

// Msg is a decoded message. Which fields are set depends on Type; Frame
// aliases the reader's buffer and is valid until the next read.
type Msg struct {
	Type     MsgType
	Version  uint16
	Key      [halfKey]byte // HostHello, Join
	Rank     int           // the remote rank (Connect … Credit), or the guest's (Welcome)
	Size     int           // Welcome
	Max      int           // Welcome: the job's growth limit, 0 when it cannot grow
	Late     bool          // Welcome: the rank joined after the job formed
	N        uint32        // LinkUp: max frame; Credit: bytes
	Window   uint32        // LinkUp
	Cause    Cause         // LinkDown
	Code     int           // Abort
	Text     string        // Refused, LinkDown, Abort (where); NameAnswer: the port, or what failed
	Settings map[string]string
	Frame    []byte    // Data
	ID       uint32    // Name, NameAnswer, NameCancel: the guest's request id
	Op       NameOp    // Name
	Service  string    // Name
	Port     string    // Name: the port to publish
	Class    NameClass // NameAnswer
	Ops      []Op      // Telemetry
	Dropped  int       // Telemetry
	// Payload is the rest of a data message's frame when it was
	// decoded from two pieces (a host reading a guest's head and
	// payload where the guest wrote them); nil: Frame is all of it.
	Payload []byte
}

// Op is one operation a guest rank completed, as telemetry reports it
// (the signaling package's OpEvent says what each field is).
type Op struct {
	Op, Comm   string
	Peer       int // world rank of a point-to-point operation's peer; -1 for a collective
	Bytes      int64
	Start, End int64 // unix µs on the guest's clock
	Err        string
}

// Bounds of a telemetry message: its operations, and the bytes of an
// operation's name, communicator name and error (longer ones are cut).
const (
	MaxTelemetryOps = 1024
	maxOpName       = 32
	maxOpComm       = 128
	maxOpErr        = 1024
	// maxTelemetryMessage bounds a telemetry message as MaxMessage did
	// before version 3 made room for 1 MiB frames: the host reports
	// each message's operations at once, and a batch stays small.
	maxTelemetryMessage = 1 + 4 + 65535
)

// Message layout: every message is a little-endian length (of what
// follows it), a type byte and the type's body:
//
//	+---------------+------+-----------------------------+
//	|  length (u32) | type | body (length-1 bytes)       |
//	+---------------+------+-----------------------------+
//
//	host-hello  version u16, key [16] (the key's first half)
//	join        version u16, key [16] (the key's second half)
//	welcome     rank u32, size u32, max u32, late u8 (0|1),
//	            count u16, count × (key str, value str)
//	refused     reason str
//	connect     rank u32
//	link-up     rank u32, max frame u32, window u32
//	link-down   rank u32, cause u8, reason str
//	close       rank u32
//	data        rank u32, frame (the rest)
//	credit      rank u32, bytes u32
//	abort       rank u32, code i32, where str
//	name        id u32, op u8, service str, port str (publish; else empty)
//	name-answer id u32, class u8, text str
//	name-cancel id u32
//	report-ready (no body)
//	report      (no body)
//	telemetry   dropped u32, count u16, count × (op str, comm str,
//	            peer i32 (-1: none), bytes u64, start i64, end i64,
//	            err str)
//	evicted     reason str
//
// where str is a u16 length and that many bytes of UTF-8. A welcome's
// rank is below the job's limit, max(size, max) (Welcome.Limit), and
// late says it is not below size; a name's service and a publish's port
// are 1 … MaxName bytes of UTF-8.
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
func AppendWelcome(b []byte, w Welcome) []byte {
	keys := slices.Sorted(maps.Keys(w.Settings))
	if len(keys) > maxSettings {
		keys = keys[:maxSettings]
	}
	n := 4 + 4 + 4 + 1 + 2
	for _, k := range keys {
		n += 2 + min(len(k), maxText) + 2 + min(len(w.Settings[k]), maxText)
	}
	b = appendPrefix(b, MsgWelcome, n)
	b = binary.LittleEndian.AppendUint32(b, uint32(w.Rank))
	b = binary.LittleEndian.AppendUint32(b, uint32(w.Size))
	b = binary.LittleEndian.AppendUint32(b, uint32(w.Max))
	b = append(b, boolByte(w.Late))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(keys)))
	for _, k := range keys {
		b = appendStr(appendStr(b, k), w.Settings[k])
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// AppendRefused appends a refusal.
func AppendRefused(b []byte, reason string) []byte { return appendReason(b, MsgRefused, reason) }

// appendReason appends a message of type t whose body is reason.
func appendReason(b []byte, t MsgType, reason string) []byte {
	b = appendPrefix(b, t, 2+min(len(reason), maxText))
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
	return append(AppendDataHead(b, rank, hdr, len(payload)), payload...)
}

// AppendDataHead appends the bytes of a data message before its payload:
// the message carries the frame hdr and the n bytes written after them.
func AppendDataHead(b []byte, rank int, hdr []byte, n int) []byte {
	return append(appendRank(b, MsgData, rank, len(hdr)+n), hdr...)
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

// AppendEvicted appends the eviction of the guest's rank, for reason.
func AppendEvicted(b []byte, reason string) []byte { return appendReason(b, MsgEvicted, reason) }

// AppendName appends a name request: op on service, with port for
// NamePublish ("" for the others). Names longer than MaxName are cut
// here; the guest refuses them before (Guest.Publish).
func AppendName(b []byte, id uint32, op NameOp, service, port string) []byte {
	service, port = service[:min(len(service), MaxName)], port[:min(len(port), MaxName)]
	b = appendPrefix(b, MsgName, 4+1+2+len(service)+2+len(port))
	b = binary.LittleEndian.AppendUint32(b, id)
	b = append(b, byte(op))
	return appendStr(appendStr(b, service), port)
}

// AppendNameAnswer appends the answer to name request id.
func AppendNameAnswer(b []byte, id uint32, c NameClass, text string) []byte {
	b = appendPrefix(b, MsgNameAnswer, 4+1+2+min(len(text), maxText))
	b = binary.LittleEndian.AppendUint32(b, id)
	b = append(b, byte(c))
	return appendStr(b, text)
}

// AppendNameCancel appends the cancellation of name request id.
func AppendNameCancel(b []byte, id uint32) []byte {
	b = appendPrefix(b, MsgNameCancel, 4)
	return binary.LittleEndian.AppendUint32(b, id)
}

// AppendReportReady appends the guest's word that it answers report.
func AppendReportReady(b []byte) []byte { return appendPrefix(b, MsgReportReady, 0) }

// AppendReport appends the host's request for the guest's report.
func AppendReport(b []byte) []byte { return appendPrefix(b, MsgReport, 0) }

// opLen is the bytes op takes in a telemetry message.
func opLen(op *Op) int {
	return 2 + min(len(op.Op), maxOpName) + 2 + min(len(op.Comm), maxOpComm) + 4 + 8 + 8 + 8 + 2 + min(len(op.Err), maxOpErr)
}

// AppendTelemetry appends a telemetry message with dropped and as many
// of ops as fit one message (at least one, at most MaxTelemetryOps),
// and returns how many it took. Names and errors longer than the
// message allows are cut (at a byte: the host makes them valid UTF-8).
func AppendTelemetry(b []byte, dropped int, ops []Op) ([]byte, int) {
	n, size := 0, 4+2
	for n < len(ops) && n < MaxTelemetryOps && (n == 0 || 1+size+opLen(&ops[n]) <= maxTelemetryMessage) {
		size += opLen(&ops[n])
		n++
	}
	b = appendPrefix(b, MsgTelemetry, size)
	b = binary.LittleEndian.AppendUint32(b, uint32(min(max(dropped, 0), 1<<31-1)))
	b = binary.LittleEndian.AppendUint16(b, uint16(n))
	for i := range ops[:n] {
		op := &ops[i]
		b = appendStr(b, op.Op[:min(len(op.Op), maxOpName)])
		b = appendStr(b, op.Comm[:min(len(op.Comm), maxOpComm)])
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(max(op.Peer, -1))))
		b = binary.LittleEndian.AppendUint64(b, uint64(op.Bytes))
		b = binary.LittleEndian.AppendUint64(b, uint64(op.Start))
		b = binary.LittleEndian.AppendUint64(b, uint64(op.End))
		b = appendStr(b, op.Err[:min(len(op.Err), maxOpErr)])
	}
	return b, n
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
		m.Rank, m.Size, m.Max = d.rank(), d.rank(), d.rank()
		late := d.u8()
		m.Late = late == 1
		if d.err == nil && late > 1 {
			return m, fmt.Errorf("%w: welcome with late %d", ErrProtocol, late)
		}
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
		if d.err == nil && (m.Size < 1 || m.Max != 0 && m.Max < m.Size || m.Rank >= max(m.Size, m.Max) || m.Late != (m.Rank >= m.Size)) {
			return m, fmt.Errorf("%w: welcome to rank %d of %d (max %d, late %v)", ErrProtocol, m.Rank, m.Size, m.Max, m.Late)
		}
	case MsgRefused, MsgEvicted:
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
	case MsgName:
		m.ID, m.Op = d.u32(), NameOp(d.u8())
		m.Service, m.Port = d.str(), d.str()
		if d.err == nil {
			if err := checkName(m.Op, m.Service, m.Port); err != nil {
				return m, fmt.Errorf("%w: %w", ErrProtocol, err)
			}
		}
	case MsgNameAnswer:
		m.ID, m.Class = d.u32(), NameClass(d.u8())
		m.Text = d.str()
		if d.err == nil && (m.Class == 0 || m.Class >= nameClassEnd) {
			return m, fmt.Errorf("%w: name-answer class %d", ErrProtocol, m.Class)
		}
	case MsgNameCancel:
		m.ID = d.u32()
	case MsgReportReady, MsgReport: // no body
	case MsgTelemetry:
		m.Dropped = int(d.u32())
		n := int(d.u16())
		if n > MaxTelemetryOps {
			return m, fmt.Errorf("%w: telemetry with %d operations", ErrProtocol, n)
		}
		m.Ops = make([]Op, 0, n)
		for range n {
			op := Op{Op: d.str(), Comm: d.str(), Peer: int(int32(d.u32())), Bytes: int64(d.u64()),
				Start: int64(d.u64()), End: int64(d.u64()), Err: d.str()}
			if d.err != nil {
				break
			}
			if op.Op == "" || len(op.Op) > maxOpName || len(op.Comm) > maxOpComm || len(op.Err) > maxOpErr ||
				op.Peer < -1 || op.Peer > maxRank || op.Bytes < 0 || op.Start <= 0 || op.End < op.Start {
				return m, fmt.Errorf("%w: telemetry with a malformed operation (%q on %q, peer %d, %d bytes, %d to %d)",
					ErrProtocol, op.Op, op.Comm, op.Peer, op.Bytes, op.Start, op.End)
			}
			m.Ops = append(m.Ops, op)
		}
		if d.err == nil && m.Dropped < 0 {
			return m, fmt.Errorf("%w: telemetry dropped %d", ErrProtocol, m.Dropped)
		}
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

// checkName checks a name request's operation and names: a service and
// a publish's port of 1 … MaxName bytes of UTF-8, no port otherwise.
func checkName(op NameOp, service, port string) error {
	switch {
	case op == 0 || op >= nameOpEnd:
		return fmt.Errorf("name operation %d", op)
	case service == "" || len(service) > MaxName:
		return fmt.Errorf("%d-byte service name (want 1 … %d)", len(service), MaxName)
	case op == NamePublish && (port == "" || len(port) > MaxName):
		return fmt.Errorf("%d-byte port name (want 1 … %d)", len(port), MaxName)
	case op != NamePublish && port != "":
		return fmt.Errorf("a port name in a name request that is no publish")
	case !utf8.ValidString(service) || !utf8.ValidString(port):
		return fmt.Errorf("a name that is not UTF-8")
	}
	return nil
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

func (d *decoder) u64() uint64 {
	if v := d.bytes(8); v != nil {
		return binary.LittleEndian.Uint64(v)
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

	// Land, if set, is offered each data message of at least LandMin
	// bytes once its rank and frame header are read, before its payload
	// (n bytes): if it reports true it called read once with where the
	// payload goes, and the message is handled (Next goes on to the
	// next one); false leaves the message to Next's caller as usual.
	// It lets a guest read a large rendezvous payload straight into its
	// receive buffer (peer.DataLander).
	Land     func(rank int, hdr []byte, n int, read func(dst []byte) error) bool
	readFull func(dst []byte) error // reads into dst, keeping the error in landErr
	landErr  error
}

// LandMin is the least message length a Reader offers its Land hook: a
// copy saved costs less than the hook's call below it.
const LandMin = 16 << 10

// DataHead is a data message's bytes before its payload, after its
// length: type, rank and the frame's header.
const DataHead = 1 + 4 + peer.HeaderLen

// NewReader returns a Reader of r; r should be buffered.
func NewReader(r io.Reader) *Reader {
	rd := &Reader{r: r, buf: make([]byte, 0, 4096)}
	rd.readFull = func(dst []byte) error {
		_, err := io.ReadFull(rd.r, dst)
		rd.landErr = err
		return err
	}
	return rd
}

// Next reads and decodes the next message. A clean end of the stream
// between messages is io.EOF; anything else that is not a whole valid
// message wraps ErrProtocol or is the stream's error.
func (r *Reader) Next() (Msg, error) {
	for {
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
		head := 0 // bytes of the message read
		if r.Land != nil && n >= max(LandMin, DataHead+1) {
			// the head only: a payload that lands never needs the
			// buffer to grow to hold it
			b := r.grow(DataHead, 0)
			if err := r.fill(b[:DataHead], n); err != nil {
				return Msg{}, err
			}
			head = DataHead
			if MsgType(b[0]) == MsgData {
				rank := binary.LittleEndian.Uint32(b[1:])
				r.landErr = nil
				if rank <= maxRank && r.Land(int(rank), b[5:DataHead], n-DataHead, r.readFull) {
					if err := r.landErr; err != nil {
						return Msg{}, r.inside(err, n)
					}
					continue
				}
			}
		}
		b := r.grow(n, head)[:n]
		if err := r.fill(b[head:], n); err != nil {
			return Msg{}, err
		}
		return Decode(MsgType(b[0]), b[1:])
	}
}

// grow makes the buffer hold n bytes, keeping its first keep, and
// returns it.
func (r *Reader) grow(n, keep int) []byte {
	if cap(r.buf) < n {
		b := make([]byte, n, max(n, 2*cap(r.buf)))
		copy(b, r.buf[:keep])
		r.buf = b
	}
	return r.buf[:cap(r.buf)]
}

// fill reads p, a part of an n-byte message, whole.
func (r *Reader) fill(p []byte, n int) error {
	if _, err := io.ReadFull(r.r, p); err != nil {
		return r.inside(err, n)
	}
	return nil
}

// inside is the error of a read that failed inside an n-byte message.
func (r *Reader) inside(err error, n int) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: stream ends inside a %d-byte message", ErrProtocol, n)
	}
	return err
}
