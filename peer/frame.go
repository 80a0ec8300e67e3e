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
// the endpoint that issued them. An eager frame's seq is the message's id
// on its link (cancel.go; peers before cancel frames sent 0 there, which
// receivers ignore). A credit frame carries its grant in total (see
// credit.go). A cancel frame names a message by context, tag and seq (the
// eager id, or with FlagRendezvous the RTS's send id) and gives in rid the
// slot id its reply answers; the reply repeats seq and rid.
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
// of eager data; Cancel and CancelReply withdraw an unmatched message
// (MPI_Cancel on a send, cancel.go).
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
	// KindCancel asks the receiver to withdraw an unmatched message of
	// this link: context, tag and seq name it (FlagRendezvous: an RTS),
	// rid is the sender's id for the reply.
	KindCancel
	// KindCancelReply answers a KindCancel: seq and rid as the request
	// had them, FlagCancelled if the message was withdrawn.
	KindCancelReply
	kindEnd
)

// FlagRefused, on a CTS, tells the sender that the receiver matched its
// message but cannot take the data (its rendezvous table is full): the
// send fails with ErrResources instead of completing.
const FlagRefused uint16 = 1

// FlagRendezvous, on a cancel frame or its reply, says the message named
// is a rendezvous announcement, whose seq is the sender's send id: eager
// ids and send ids are drawn apart and may coincide.
const FlagRendezvous uint16 = 2

// FlagCancelled, on a cancel reply, says the receiver withdrew the
// message before any receive matched it: the send completes cancelled.
const FlagCancelled uint16 = 4

// flagsOf returns the flags a frame of kind k may carry.
func flagsOf(k Kind) uint16 {
	switch k {
	case KindCTS:
		return FlagRefused
	case KindCancel:
		return FlagRendezvous
	case KindCancelReply:
		return FlagRendezvous | FlagCancelled
	}
	return 0
}

var kindNames = [kindEnd]string{KindEager: "eager", KindRTS: "rts", KindCTS: "cts", KindData: "data", KindCredit: "credit",
	KindCancel: "cancel", KindCancelReply: "cancel-reply"}

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
	if h.Flags&^flagsOf(h.Kind) != 0 {
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
	case KindRTS, KindCTS, KindCredit, KindCancel, KindCancelReply:
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
