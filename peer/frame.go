package peer

import (
	"encoding/binary"
	"fmt"
)

// Frame layout, version 2 (version 1 had no credit frame and no flags). Every frame is a fixed 40-byte little-endian
// header followed by its payload; header and payload together are at most the
// link's MaxFrame.
//
//	 0       1       2               4               8
//	+-------+-------+---------------+---------------+
//	|version| kind  |     flags     |    context    |
//	+-------+-------+---------------+---------------+
//	8               12              16              20
//	+---------------+---------------+---------------+
//	|      tag      |    source     |      seq      |
//	+---------------+---------------+---------------+
//	20              24                              32
//	+---------------+-------------------------------+
//	|      rid      |            total              |
//	+---------------+-------------------------------+
//	32                              40
//	+-------------------------------+
//	|            offset             |   payload ...
//	+-------------------------------+
//
// seq names a message at its sender (the rendezvous send id), rid names the
// receive at its receiver (the rendezvous receive id); both are slot ids of
// the endpoint that issued them. A credit frame carries its grant in
// total (see credit.go).
const (
	// Version is the frame format this package writes and accepts.
	Version = 2
	// HeaderLen is the size of a frame header in bytes.
	HeaderLen = 40
	// MaxMessage bounds the length of one message (1 TiB), so a corrupt
	// header cannot make a receiver size anything absurd.
	MaxMessage = 1 << 40
)

// Kind is the type of a frame.
type Kind uint8

// Frame kinds. Eager carries a whole message; RTS, CTS and Data are the three
// steps of the rendezvous protocol; Credit is the receiver's flow control
// of eager data.
const (
	// KindEager carries a whole message: envelope, total length and payload.
	KindEager Kind = 1 + iota
	// KindRTS (ready to send) announces a rendezvous message: envelope and total length, no payload.
	KindRTS
	// KindCTS (clear to send) answers a matched RTS: seq is the sender's id, rid the
	// receiver's, total the number of bytes the receiver takes (≤ the message).
	KindCTS
	// KindData carries rendezvous payload for receive rid at offset.
	KindData
	// KindCredit grants the sender total more bytes of eager credit: what
	// the receiver's unexpected queue freed (credit.go).
	KindCredit
	kindEnd
)

// FlagRefused, on a CTS, tells the sender that the receiver matched its
// message but cannot take the data (its rendezvous table is full): the
// send fails with ErrResources instead of completing.
const FlagRefused uint16 = 1

var kindNames = [kindEnd]string{KindEager: "eager", KindRTS: "rts", KindCTS: "cts", KindData: "data", KindCredit: "credit"}

// String returns the kind's protocol name.
func (k Kind) String() string {
	if k > 0 && k < kindEnd {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Header is a decoded frame header.
type Header struct {
	Kind    Kind
	Flags   uint16
	Context uint32
	Tag     int32
	Source  uint32
	Seq     uint32
	RID     uint32
	Total   uint64
	Offset  uint64
}

// Encode writes h into b[:HeaderLen] with the current Version.
func (h *Header) Encode(b []byte) {
	_ = b[HeaderLen-1]
	b[0] = Version
	b[1] = byte(h.Kind)
	binary.LittleEndian.PutUint16(b[2:], h.Flags)
	binary.LittleEndian.PutUint32(b[4:], h.Context)
	binary.LittleEndian.PutUint32(b[8:], uint32(h.Tag))
	binary.LittleEndian.PutUint32(b[12:], h.Source)
	binary.LittleEndian.PutUint32(b[16:], h.Seq)
	binary.LittleEndian.PutUint32(b[20:], h.RID)
	binary.LittleEndian.PutUint64(b[24:], h.Total)
	binary.LittleEndian.PutUint64(b[32:], h.Offset)
}

// Decode parses and validates the header at the front of a frame whose
// payload is payloadLen bytes long. It rejects anything a correct peer of
// this version never sends, so the matching engine can trust what it gets.
func (h *Header) Decode(b []byte, payloadLen int) error {
	if len(b) < HeaderLen {
		return fmt.Errorf("%w: %d-byte header, want %d", ErrFrame, len(b), HeaderLen)
	}
	if b[0] != Version {
		return fmt.Errorf("%w: frame version %d, this endpoint speaks %d", ErrVersion, b[0], Version)
	}
	*h = Header{
		Kind:    Kind(b[1]),
		Flags:   binary.LittleEndian.Uint16(b[2:]),
		Context: binary.LittleEndian.Uint32(b[4:]),
		Tag:     int32(binary.LittleEndian.Uint32(b[8:])),
		Source:  binary.LittleEndian.Uint32(b[12:]),
		Seq:     binary.LittleEndian.Uint32(b[16:]),
		RID:     binary.LittleEndian.Uint32(b[20:]),
		Total:   binary.LittleEndian.Uint64(b[24:]),
		Offset:  binary.LittleEndian.Uint64(b[32:]),
	}
	if h.Flags != 0 && (h.Kind != KindCTS || h.Flags != FlagRefused) {
		return fmt.Errorf("%w: flags %#x on a %s frame", ErrFrame, h.Flags, h.Kind)
	}
	if h.Total > MaxMessage {
		return fmt.Errorf("%w: %s frame announces %d bytes, limit %d", ErrFrame, h.Kind, h.Total, uint64(MaxMessage))
	}
	n := uint64(payloadLen)
	switch h.Kind {
	case KindEager:
		if h.Offset != 0 || n != h.Total {
			return fmt.Errorf("%w: eager frame with offset %d and %d of %d bytes", ErrFrame, h.Offset, n, h.Total)
		}
	case KindRTS, KindCTS, KindCredit:
		if n != 0 || h.Offset != 0 {
			return fmt.Errorf("%w: %s frame with payload or offset", ErrFrame, h.Kind)
		}
	case KindData:
		if n == 0 || h.Offset >= h.Total || n > h.Total-h.Offset {
			return fmt.Errorf("%w: data frame [%d, +%d) outside %d bytes", ErrFrame, h.Offset, n, h.Total)
		}
	default:
		return fmt.Errorf("%w: unknown %s", ErrFrame, h.Kind)
	}
	return nil
}
