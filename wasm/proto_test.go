package wasm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// messages is one of every message type, encoded.
func messages() [][]byte {
	var key [KeyLen]byte
	for i := range key {
		key[i] = byte(i)
	}
	hdr, payload := make([]byte, 40), []byte("payload")
	return [][]byte{
		AppendHostHello(nil, key),
		AppendJoin(nil, key),
		AppendWelcome(nil, Welcome{Rank: 2, Size: 5, Settings: map[string]string{"net": "loopback", "coll.allreduce": "ring"}}),
		AppendWelcome(nil, Welcome{Rank: 0, Size: 1}),
		AppendWelcome(nil, Welcome{Rank: 1, Size: 2, Max: 8}),
		AppendWelcome(nil, Welcome{Rank: 7, Size: 2, Max: 8, Late: true, Settings: map[string]string{"net": "loopback"}}),
		AppendRefused(nil, "bad token"),
		AppendConnect(nil, 3),
		AppendLinkUp(nil, 4, 65535, 1<<20),
		AppendLinkDown(nil, 1, CauseLeft, "rank 1 left the job"),
		AppendClose(nil, 7),
		AppendData(nil, 9, hdr, payload),
		AppendCredit(nil, 2, 123456),
		AppendAbort(nil, 3, 5, "main.go:17"),
		AppendAbort(nil, 0, -1, ""),
		AppendName(nil, 1, NamePublish, "ocean", "port-of-rank-3"),
		AppendName(nil, 2, NameUnpublish, "ocean", ""),
		AppendName(nil, 1<<32-1, NameLookup, string(bytes.Repeat([]byte{'s'}, MaxName)), ""),
		AppendNameAnswer(nil, 3, NameOK, "port-of-rank-3"),
		AppendNameAnswer(nil, 4, NameTaken, ""),
		AppendNameAnswer(nil, 5, NameFailed, "signaling: connection lost"),
		AppendNameCancel(nil, 6),
		AppendReportReady(nil),
		AppendReport(nil),
		AppendEvicted(nil, "rank 2 was evicted from the job: process failed"),
		AppendEvicted(nil, ""),
		telemetry(0, Op{Op: "allreduce", Comm: "world", Peer: -1, Bytes: 8, Start: 1, End: 2},
			Op{Op: "recv", Comm: "comm 3", Peer: 5, Start: 3, End: 3, Err: "receive from rank 5: proc failed"}),
		telemetry(17),
	}
}

// telemetry is AppendTelemetry's message of ops, checked to hold them all.
func telemetry(dropped int, ops ...Op) []byte {
	b, n := AppendTelemetry(nil, dropped, ops)
	if n != len(ops) {
		panic("telemetry message cut")
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, b := range messages() {
		r := NewReader(bytes.NewReader(b))
		m, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, b, encode(m), "%v", m.Type)
		_, err = r.Next()
		require.ErrorIs(t, err, io.EOF)
	}
}

// encode re-encodes a decoded message with the Append functions.
func encode(m Msg) []byte {
	var key [KeyLen]byte
	switch m.Type {
	case MsgHostHello:
		copy(key[:halfKey], m.Key[:])
		b := AppendHostHello(nil, key)
		binary.LittleEndian.PutUint16(b[5:], m.Version)
		return b
	case MsgJoin:
		copy(key[halfKey:], m.Key[:])
		b := AppendJoin(nil, key)
		binary.LittleEndian.PutUint16(b[5:], m.Version)
		return b
	case MsgWelcome:
		return AppendWelcome(nil, Welcome{Rank: m.Rank, Size: m.Size, Max: m.Max, Late: m.Late, Settings: m.Settings})
	case MsgRefused:
		return AppendRefused(nil, m.Text)
	case MsgEvicted:
		return AppendEvicted(nil, m.Text)
	case MsgConnect:
		return AppendConnect(nil, m.Rank)
	case MsgLinkUp:
		return AppendLinkUp(nil, m.Rank, int(m.N), int(m.Window))
	case MsgLinkDown:
		return AppendLinkDown(nil, m.Rank, m.Cause, m.Text)
	case MsgClose:
		return AppendClose(nil, m.Rank)
	case MsgData:
		return AppendData(nil, m.Rank, m.Frame, nil)
	case MsgCredit:
		return AppendCredit(nil, m.Rank, int(m.N))
	case MsgAbort:
		return AppendAbort(nil, m.Rank, m.Code, m.Text)
	case MsgName:
		return AppendName(nil, m.ID, m.Op, m.Service, m.Port)
	case MsgNameAnswer:
		return AppendNameAnswer(nil, m.ID, m.Class, m.Text)
	case MsgNameCancel:
		return AppendNameCancel(nil, m.ID)
	case MsgReportReady:
		return AppendReportReady(nil)
	case MsgReport:
		return AppendReport(nil)
	case MsgTelemetry:
		return telemetry(m.Dropped, m.Ops...)
	}
	return nil
}

func TestMalformed(t *testing.T) {
	le := binary.LittleEndian
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"zero length", le.AppendUint32(nil, 0)},
		{"oversized length", le.AppendUint32(nil, MaxMessage+1)},
		{"truncated length", []byte{1, 0}},
		{"truncated body", append(le.AppendUint32(nil, 10), byte(MsgConnect), 1)},
		{"unknown type", append(le.AppendUint32(nil, 1), 200)},
		{"short connect", append(le.AppendUint32(nil, 3), byte(MsgConnect), 1, 2)},
		{"long connect", append(le.AppendUint32(nil, 6), byte(MsgConnect), 1, 0, 0, 0, 9)},
		{"rank out of range", append(le.AppendUint32(nil, 5), byte(MsgClose), 0xff, 0xff, 0xff, 0xff)},
		{"empty data", append(le.AppendUint32(nil, 5), byte(MsgData), 1, 0, 0, 0)},
		{"link-up without room for a header", AppendLinkUp(nil, 1, 40, 1<<20)},
		{"link-up window below a frame", AppendLinkUp(nil, 1, 1000, 999)},
		{"link-down without a cause", AppendLinkDown(nil, 1, 0, "")},
		{"welcome rank beyond size", AppendWelcome(nil, Welcome{Rank: 3, Size: 3})},
		{"welcome rank beyond max", AppendWelcome(nil, Welcome{Rank: 8, Size: 3, Max: 8, Late: true})},
		{"welcome max below size", AppendWelcome(nil, Welcome{Rank: 1, Size: 3, Max: 2})},
		{"welcome late rank in the world", AppendWelcome(nil, Welcome{Rank: 1, Size: 3, Max: 8, Late: true})},
		{"welcome late rank not late", AppendWelcome(nil, Welcome{Rank: 4, Size: 3, Max: 8})},
		{"welcome late byte 2", setByte(AppendWelcome(nil, Welcome{Rank: 0, Size: 1}), 5+12, 2)},
		{"welcome of version 1", append(le.AppendUint32(nil, 1+4+4+2), byte(MsgWelcome), 0, 0, 0, 0, 1, 0, 0, 0, 0, 0)},
		{"name without an op", AppendName(nil, 1, 0, "svc", "")},
		{"name with an unknown op", AppendName(nil, 1, nameOpEnd, "svc", "")},
		{"name with an empty service", AppendName(nil, 1, NameLookup, "", "")},
		{"publish without a port", AppendName(nil, 1, NamePublish, "svc", "")},
		{"lookup with a port", AppendName(nil, 1, NameLookup, "svc", "port")},
		{"unpublish with a port", AppendName(nil, 1, NameUnpublish, "svc", "port")},
		{"service over MaxName", nameBytes(NameLookup, MaxName+1, 0)},
		{"port over MaxName", nameBytes(NamePublish, 3, MaxName+1)},
		{"short name", append(le.AppendUint32(nil, 4), byte(MsgName), 1, 0, 0)},
		{"name-answer without a class", AppendNameAnswer(nil, 1, 0, "")},
		{"telemetry op without a name", telemetry(0, Op{Start: 1, End: 1})},
		{"telemetry op ending before it starts", telemetry(0, Op{Op: "send", Start: 5, End: 4})},
		{"telemetry op with a negative byte count", telemetry(0, Op{Op: "send", Bytes: -1, Start: 1, End: 1})},
		{"name-answer with an unknown class", AppendNameAnswer(nil, 1, nameClassEnd, "")},
		{"long name-cancel", append(le.AppendUint32(nil, 6), byte(MsgNameCancel), 1, 0, 0, 0, 9)},
		{"short name-cancel", append(le.AppendUint32(nil, 3), byte(MsgNameCancel), 1, 0)},
		{"report-ready with a body", append(le.AppendUint32(nil, 2), byte(MsgReportReady), 0)},
		{"report with a body", append(le.AppendUint32(nil, 3), byte(MsgReport), 1, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(tc.b)).Next()
			require.ErrorIs(t, err, ErrProtocol)
		})
	}
}

// setByte sets b[i] to v and returns b.
func setByte(b []byte, i int, v byte) []byte {
	b[i] = v
	return b
}

// nameBytes is a name message with a service and a port of the given
// lengths, built by hand: AppendName cuts names to MaxName.
func nameBytes(op NameOp, service, port int) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(1+4+1+2+service+2+port))
	b = append(b, byte(MsgName))
	b = le.AppendUint32(b, 9)
	b = append(b, byte(op))
	b = append(le.AppendUint16(b, uint16(service)), bytes.Repeat([]byte{'s'}, service)...)
	return append(le.AppendUint16(b, uint16(port)), bytes.Repeat([]byte{'p'}, port)...)
}

// TestWelcomeLimit: a welcome's Max and Late survive the stream, and
// Limit is max(Size, Max).
// The report messages are a bare type byte: length 1, and nothing else.
func TestReportMessages(t *testing.T) {
	require.Equal(t, []byte{1, 0, 0, 0, byte(MsgReportReady)}, AppendReportReady(nil))
	require.Equal(t, []byte{1, 0, 0, 0, byte(MsgReport)}, AppendReport(nil))
	r := NewReader(bytes.NewReader(AppendReport(AppendReportReady(nil))))
	for _, want := range []MsgType{MsgReportReady, MsgReport} {
		m, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, Msg{Type: want}, m)
	}
	require.Equal(t, "report-ready", MsgReportReady.String())
	require.Equal(t, "report", MsgReport.String())
}

func TestWelcomeLimit(t *testing.T) {
	for _, w := range []Welcome{{Rank: 0, Size: 4}, {Rank: 3, Size: 4, Max: 9}, {Rank: 6, Size: 4, Max: 9, Late: true}} {
		m, err := NewReader(bytes.NewReader(AppendWelcome(nil, w))).Next()
		require.NoError(t, err)
		got := Welcome{Rank: m.Rank, Size: m.Size, Max: m.Max, Late: m.Late}
		require.Equal(t, w, got)
		require.Equal(t, max(w.Size, w.Max), got.Limit())
	}
}

// TestAppendNameCuts: names beyond MaxName are cut to it by AppendName,
// so its messages always decode.
func TestAppendNameCuts(t *testing.T) {
	long := string(bytes.Repeat([]byte{'x'}, MaxName+10))
	m, err := NewReader(bytes.NewReader(AppendName(nil, 1, NamePublish, long, long))).Next()
	require.NoError(t, err)
	require.Len(t, m.Service, MaxName)
	require.Len(t, m.Port, MaxName)
}

func TestDataAllocatesNothing(t *testing.T) {
	var buf bytes.Buffer
	hdr, payload := make([]byte, 40), make([]byte, 1000)
	b := make([]byte, 0, 2048)
	r := NewReader(&buf)
	allocs := testing.AllocsPerRun(100, func() {
		b = AppendData(b[:0], 3, hdr, payload)
		buf.Write(b)
		if m, err := r.Next(); err != nil || len(m.Frame) != 1040 {
			panic(err)
		}
	})
	require.Zero(t, allocs)
}

// FuzzDecode: any byte stream decodes into valid messages or a protocol
// error, never a panic; a message that decodes re-encodes to its bytes
// (settings come out sorted, so welcomes with settings are compared by
// decoding again).
func FuzzDecode(f *testing.F) {
	for _, b := range messages() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b))
		for {
			m, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrProtocol) {
					t.Fatalf("error %v is neither EOF nor ErrProtocol", err)
				}
				return
			}
			e := encode(m)
			m2, err := NewReader(bytes.NewReader(e)).Next()
			if err != nil {
				t.Fatalf("re-encoded %v does not decode: %v", m.Type, err)
			}
			if m.Type != MsgWelcome && !bytes.Equal(e, encode(m2)) {
				t.Fatalf("%v does not round-trip", m.Type)
			}
		}
	})
}

// A report larger than one message goes in several, each whole.
func TestTelemetrySplits(t *testing.T) {
	ops := make([]Op, 3000)
	for i := range ops {
		ops[i] = Op{Op: "send", Comm: "world", Peer: 1, Bytes: int64(i), Start: 1, End: 2, Err: string(bytes.Repeat([]byte{'e'}, 100))}
	}
	var got []Op
	for rest, dropped := ops, 9; len(rest) > 0; dropped = 0 {
		b, n := AppendTelemetry(nil, dropped, rest)
		require.LessOrEqual(t, len(b), prefixLen+MaxMessage)
		m, err := NewReader(bytes.NewReader(b)).Next()
		require.NoError(t, err)
		require.Equal(t, dropped, m.Dropped)
		got, rest = append(got, m.Ops...), rest[n:]
	}
	require.Equal(t, ops, got)
}
