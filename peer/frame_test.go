package peer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []Header{
		{Kind: KindEager, Context: 0, Tag: 0, Source: 0, Total: 0},
		{Kind: KindEager, Context: 7, Tag: 1<<31 - 1, Source: 3, Total: 5},
		{Kind: KindRTS, Context: 9, Tag: -1, Source: 1 << 20, Seq: 0xdeadbeef, Total: MaxMessage},
		{Kind: KindCTS, Seq: 1, RID: 2, Total: 1 << 30},
		{Kind: KindData, RID: 77, Total: 100, Offset: 90},
		{Kind: KindCTS, Flags: FlagRefused, Seq: 3},
		{Kind: KindCredit, Total: 1 << 20},
	} {
		var b [HeaderLen]byte
		h.Encode(b[:])
		payload := 0
		switch h.Kind {
		case KindEager:
			payload = int(h.Total)
		case KindData:
			payload = int(h.Total - h.Offset)
		}
		var got Header
		require.NoError(t, got.Decode(b[:], payload), "%+v", h)
		require.Equal(t, h, got)
	}
}

func TestHeaderDecodeRejects(t *testing.T) {
	good := func() []byte {
		var b [HeaderLen]byte
		(&Header{Kind: KindData, RID: 1, Total: 100, Offset: 10}).Encode(b[:])
		return b[:]
	}
	for _, tc := range []struct {
		name    string
		mutate  func(b []byte) []byte
		payload int
		want    error
	}{
		{"short", func(b []byte) []byte { return b[:HeaderLen-1] }, 10, ErrFrame},
		{"empty", func(b []byte) []byte { return nil }, 0, ErrFrame},
		{"version 0", func(b []byte) []byte { b[0] = 0; return b }, 10, ErrVersion},
		{"version 1", func(b []byte) []byte { b[0] = 1; return b }, 10, ErrVersion},
		{"version 3", func(b []byte) []byte { b[0] = 3; return b }, 10, ErrVersion},
		{"kind 0", func(b []byte) []byte { b[1] = 0; return b }, 10, ErrFrame},
		{"kind 99", func(b []byte) []byte { b[1] = 99; return b }, 10, ErrFrame},
		{"flags", func(b []byte) []byte { b[2] = 1; return b }, 10, ErrFrame},
		{"unknown cts flag", func(b []byte) []byte { b[1] = byte(KindCTS); b[2] = 2; b[32] = 0; return b }, 0, ErrFrame},
		{"credit with payload", func(b []byte) []byte { b[1] = byte(KindCredit); b[32] = 0; return b }, 1, ErrFrame},
		{"data past total", func(b []byte) []byte { return b }, 91, ErrFrame},
		{"empty data", func(b []byte) []byte { return b }, 0, ErrFrame},
		{"total too big", func(b []byte) []byte { b[31] = 0xff; return b }, 10, ErrFrame},
		{"offset past total", func(b []byte) []byte { b[32] = 200; return b }, 10, ErrFrame},
		{"eager length mismatch", func(b []byte) []byte { b[1] = byte(KindEager); b[32] = 0; return b }, 99, ErrFrame},
		{"eager with offset", func(b []byte) []byte { b[1] = byte(KindEager); return b }, 100, ErrFrame},
		{"rts with payload", func(b []byte) []byte { b[1] = byte(KindRTS); b[32] = 0; return b }, 1, ErrFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Header
			err := h.Decode(tc.mutate(good()), tc.payload)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// FuzzDecodeHeader checks that no input makes the decoder panic, and that
// whatever it accepts encodes back to the same bytes and obeys the length
// rules the matching engine relies on.
func FuzzDecodeHeader(f *testing.F) {
	seed := func(h Header, payload int) {
		var b [HeaderLen]byte
		h.Encode(b[:])
		f.Add(b[:], payload)
	}
	seed(Header{Kind: KindEager, Context: 1, Tag: 5, Source: 2, Total: 8}, 8)
	seed(Header{Kind: KindRTS, Context: 3, Tag: 9, Source: 1, Seq: 17, Total: 1 << 20}, 0)
	seed(Header{Kind: KindCTS, Seq: 17, RID: 4, Total: 1 << 20}, 0)
	seed(Header{Kind: KindData, RID: 4, Total: 1 << 20, Offset: 65495}, 65495)
	seed(Header{Kind: KindCredit, Total: 1 << 20}, 0)
	f.Add([]byte{}, 0)
	f.Add([]byte{1, 4, 0, 0}, 3)
	f.Fuzz(func(t *testing.T, b []byte, payload int) {
		if payload < 0 || payload > 1<<20 {
			return
		}
		var h Header
		if err := h.Decode(b, payload); err != nil {
			if !errors.Is(err, ErrFrame) && !errors.Is(err, ErrVersion) {
				t.Fatalf("decode error %v is neither ErrFrame nor ErrVersion", err)
			}
			return
		}
		var again [HeaderLen]byte
		h.Encode(again[:])
		if string(again[:]) != string(b[:HeaderLen]) {
			t.Fatalf("accepted header does not re-encode: %x vs %x", b[:HeaderLen], again)
		}
		if h.Total > MaxMessage || h.Kind == KindData && h.Offset+uint64(payload) > h.Total {
			t.Fatalf("accepted out-of-bounds header %+v with %d payload bytes", h, payload)
		}
	})
}
