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
		AppendWelcome(nil, 2, 5, map[string]string{"net": "loopback", "coll.allreduce": "ring"}),
		AppendWelcome(nil, 0, 1, nil),
		AppendRefused(nil, "bad token"),
		AppendConnect(nil, 3),
		AppendLinkUp(nil, 4, 65535, 1<<20),
		AppendLinkDown(nil, 1, CauseLeft, "rank 1 left the job"),
		AppendClose(nil, 7),
		AppendData(nil, 9, hdr, payload),
		AppendCredit(nil, 2, 123456),
		AppendAbort(nil, 3, 5, "main.go:17"),
		AppendAbort(nil, 0, -1, ""),
	}
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
		return AppendWelcome(nil, m.Rank, m.Size, m.Settings)
	case MsgRefused:
		return AppendRefused(nil, m.Text)
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
		{"welcome rank beyond size", AppendWelcome(nil, 3, 3, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(tc.b)).Next()
			require.ErrorIs(t, err, ErrProtocol)
		})
	}
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
